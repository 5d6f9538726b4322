// Headless entry (npm start). Filled in by the foundation issue.
console.log('Factory');
