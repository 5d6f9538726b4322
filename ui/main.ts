document.title = 'Factory';
