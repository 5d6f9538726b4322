// The environment a step's process gets (DESIGN §4): the user's own environment (agents need
// their API keys and PATH), minus anything of Factory's own, plus the run's values.

/**
 * Builds a step's environment. From `base` it drops every `FACTORY_*` variable (Factory's own
 * namespace, e.g. the data folder) and every variable whose value is one of `secrets` (the remote
 * token, webhook secrets, connection and channel tokens), whatever its name; then adds `extra`
 * layers in order (later wins). Values of `extra` that contain a secret are dropped too: a secret
 * never reaches a step, even through a pipeline's own env.
 */
export function buildStepEnvironment(
  base: NodeJS.ProcessEnv,
  secrets: Iterable<string>,
  ...extra: (Record<string, string> | undefined)[]
): Record<string, string> {
  const secretValues = [...secrets].filter((secret) => secret.length >= 8);
  const containsSecret = (value: string) => secretValues.some((secret) => value.includes(secret));
  const environment: Record<string, string> = {};
  for (const [name, value] of Object.entries(base)) {
    if (value === undefined || name.startsWith('FACTORY_') || containsSecret(value)) continue;
    environment[name] = value;
  }
  for (const layer of extra) {
    if (!layer) continue;
    for (const [name, value] of Object.entries(layer)) {
      if (containsSecret(value)) delete environment[name];
      else environment[name] = value;
    }
  }
  return environment;
}
