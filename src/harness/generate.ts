// Text and pipeline generation: the user describes what they want, an agent CLI writes it.
// The agent runs like an agent step (no shell; the prompt on stdin or as one argument) in a
// private temporary folder, so it cannot touch a project while it writes text.

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { GeneratePipelineRequest, GenerateTextRequest, HarnessDefinition, Pipeline } from '../core/api';
import { ConflictError, ValidationError, errorMessage, quote } from '../core/errors';
import { isRecord } from '../core/validate';
import { buildStepEnvironment } from '../engine/environment';
import { runProcess, type ProcessResult, type RunProcessOptions } from '../engine/process';
import { notInstalledMessage } from './builtins';
import { buildInvocation } from './invocation';
import { createParser } from './parsers';

const generationTimeoutMs = 5 * 60 * 1000;

interface GeneratorOptions {
  harness(id: string): HarnessDefinition | undefined;
  /** The absolute path of the harness's command, or undefined when it is not installed. */
  resolveCommand(definition: HarnessDefinition): Promise<string | undefined>;
  /** Saves a generated pipeline (validated by the caller's rules); throws ValidationError when it does not fit. */
  savePipeline(input: unknown): Promise<Pipeline>;
  secrets(): string[];
  environment?: NodeJS.ProcessEnv;
  run?: (options: RunProcessOptions) => Promise<ProcessResult>;
}

const templateLanguage = `Placeholders: {{issue.title}}, {{issue.description}}, {{issue.key}}, {{issue.url}}, {{issue.labels}},
{{issue.priority}}, {{issue.source}}, {{issue.raw.<field>}}, {{vars.<name>}}, {{steps.<earlier-step-id>.output}},
{{steps.<earlier-approval-id>.selected}}, {{steps.<earlier-approval-id>.comment}}, {{run.id}}, {{run.url}},
{{project.name}}, {{project.path}}, {{workspace}}. In shell commands write placeholders inside double quotes: "{{issue.title}}".
Never put a placeholder where the shell runs text as code: not in $(( )), (( )), let, [[ ... -eq ... ]], an array subscript
or a variable name (such a pipeline is refused), nor in the script of sh -c or eval; compare with [ "{{vars.n}}" -eq 3 ].`;

const targetNames: Record<GenerateTextRequest['target'], string> = {
  prompt: 'the prompt of an agent step (instructions for a coding agent working in the repository)',
  systemPrompt: 'the system prompt of an agent step (standing rules for the coding agent)',
  command: 'the command of a shell step (POSIX sh, run in the workspace)',
};

const pipelineSchema = `{
  "servicePipeline": 1,
  "name": "short name",
  "description": "one sentence",
  "variables": { "NAME": "default value" },
  "steps": [
    { "id": "lower-case-id", "name": "Step name", "kind": "shell", "command": "npm test", "timeoutSec": 600, "retries": 0, "continueOnError": false },
    { "id": "implement", "name": "Implement", "kind": "agent", "prompt": "Implement {{issue.title}} ...", "systemPrompt": "optional" },
    { "id": "review", "name": "Review", "kind": "approval", "message": "Approve?", "choices": { "mode": "single", "options": ["Ship it", "Rework"] } }
  ]
}
Step ids match ^[a-z][a-z0-9_-]{0,39}$ and are unique; a placeholder may refer only to EARLIER steps; "choices" is optional.`;

/** The text between a leading and trailing code fence, or the text itself, trimmed. */
function stripCodeFence(text: string): string {
  const trimmed = text.trim();
  const fenced = /^```[\w-]*\n([\s\S]*?)\n?```$/.exec(trimmed);
  return (fenced ? fenced[1]! : trimmed).trim();
}

/** The first JSON object in a reply (agents like to add words around it), or undefined. */
function extractJsonObject(text: string): unknown {
  const candidates = [stripCodeFence(text)];
  const start = text.indexOf('{');
  const end = text.lastIndexOf('}');
  if (start >= 0 && end > start) candidates.push(text.slice(start, end + 1));
  for (const candidate of candidates) {
    try {
      const value = JSON.parse(candidate);
      if (isRecord(value)) return value;
    } catch {
      // try the next candidate
    }
  }
  return undefined;
}

export class Generator {
  private readonly requests = new Map<string, AbortController>();
  private pipelineGeneration: AbortController | undefined;
  private readonly run: (options: RunProcessOptions) => Promise<ProcessResult>;

  constructor(private readonly options: GeneratorOptions) {
    this.run = options.run ?? runProcess;
  }

  /** Runs the harness once with `prompt`; resolves with its final answer. */
  private async ask(harnessId: unknown, model: unknown, prompt: string, signal: AbortSignal): Promise<string> {
    if (typeof harnessId !== 'string') throw new ValidationError(`Choose the harness that writes, not ${quote(harnessId)}`);
    const definition = this.options.harness(harnessId);
    if (!definition) throw new ValidationError(`No harness \`${harnessId}\``);
    if (!definition.enabled) throw new ConflictError(`The harness ${definition.name} is switched off in Harnesses`);
    const invocation = buildInvocation(definition, { prompt, model: typeof model === 'string' ? model : '' });
    const parser = createParser(definition.output);
    const commandPath = await this.options.resolveCommand(definition);
    if (!commandPath) throw new ConflictError(notInstalledMessage(definition));
    const folder = await mkdtemp(join(tmpdir(), 'factory-generate-'));
    const errors: string[] = [];
    try {
      const result = await this.run({
        command: commandPath,
        args: invocation.args,
        ...(invocation.stdin !== undefined ? { stdin: invocation.stdin } : {}),
        cwd: folder,
        env: buildStepEnvironment(this.options.environment ?? process.env, this.options.secrets(), definition.env),
        timeoutMs: generationTimeoutMs,
        signal,
        outputLimit: 1,
        onLine: (line, stream) => {
          if (stream === 'err') errors.push(line);
          else parser.push(line);
        },
      });
      const parsed = parser.finish();
      if (result.cancelled) throw new ConflictError('Generation was cancelled');
      if (result.spawnError) throw new ConflictError(`${definition.name}: ${result.spawnError}`);
      if (result.timedOut) throw new ConflictError(`${definition.name} did not answer within ${generationTimeoutMs / 60000} minutes`);
      if (result.exitCode !== 0 || parsed.error) {
        throw new ConflictError(`${definition.name} failed: ${parsed.error ?? errors.filter((line) => line.trim()).at(-1) ?? `exit code ${result.exitCode}`}`);
      }
      return parsed.output;
    } finally {
      await rm(folder, { recursive: true, force: true });
    }
  }

  /** Writes a prompt, system prompt or shell command from the user's instructions. */
  async generateText(request: GenerateTextRequest): Promise<string> {
    if (!isRecord(request)) throw new ValidationError(`generateText takes a request object, not ${quote(request)}`);
    if (!(request.target in targetNames)) throw new ValidationError(`The target must be prompt, systemPrompt or command, not ${quote(request.target)}`);
    if (typeof request.instructions !== 'string' || !request.instructions.trim()) throw new ValidationError('Say what the text should do (instructions)');
    const requestId = typeof request.requestId === 'string' && request.requestId ? request.requestId : undefined;
    const controller = new AbortController();
    if (requestId) {
      this.requests.get(requestId)?.abort();
      this.requests.set(requestId, controller);
    }
    const context = isRecord(request.pipeline)
      ? `\nThe pipeline so far (JSON):\n${JSON.stringify({ name: request.pipeline.name, variables: request.pipeline.variables, steps: request.pipeline.steps }, null, 2)}\n${request.stepId ? `The step being written: ${request.stepId}.` : ''}`
      : '';
    const prompt = `You are writing ${targetNames[request.target]} for a Factory pipeline.
${templateLanguage}
${context}
${typeof request.current === 'string' && request.current.trim() ? `The current text:\n${request.current}\n` : ''}
What the user wants: ${request.instructions}

Reply with the text only: no explanation, no code fences.`;
    try {
      return stripCodeFence(await this.ask(request.harnessId, request.model, prompt, controller.signal));
    } finally {
      if (requestId && this.requests.get(requestId) === controller) this.requests.delete(requestId);
    }
  }

  cancelGenerate(requestId: unknown): void {
    if (typeof requestId !== 'string') throw new ValidationError(`cancelGenerate takes a request id, not ${quote(requestId)}`);
    this.requests.get(requestId)?.abort();
  }

  /**
   * Asks the agent for a pipeline as JSON (given the schema and the template language), validates it,
   * asks once more with the validation errors when it does not fit, and saves it.
   */
  async generatePipeline(request: GeneratePipelineRequest): Promise<Pipeline> {
    if (!isRecord(request) || typeof request.description !== 'string' || !request.description.trim()) {
      throw new ValidationError('Describe the pipeline you want (description)');
    }
    if (this.pipelineGeneration) throw new ConflictError('A pipeline is being generated already: wait for it or cancel it');
    const controller = new AbortController();
    this.pipelineGeneration = controller;
    let prompt = `Design a Factory pipeline as JSON, exactly in this shape:
${pipelineSchema}
${templateLanguage}
Step kinds: "shell" (a command), "agent" (a coding agent with a prompt), "approval" (a person decides).
What the pipeline should do: ${request.description}

Reply with the JSON object only.`;
    try {
      for (let tries = 1; ; tries++) {
        const reply = await this.ask(request.harnessId, request.model, prompt, controller.signal);
        const json = extractJsonObject(reply);
        try {
          if (!json) throw new ValidationError('The reply held no JSON object');
          return await this.options.savePipeline(json);
        } catch (error) {
          if (!(error instanceof ValidationError) || tries >= 2) {
            throw error instanceof ValidationError ? new ValidationError(`The agent's pipeline did not fit, twice: ${error.message}`) : error;
          }
          prompt = `${prompt}\n\nYour previous reply did not fit:\n${errorMessage(error)}\nReply with the corrected JSON object only.`;
        }
      }
    } finally {
      this.pipelineGeneration = undefined;
    }
  }

  cancelPipelineGeneration(): void {
    this.pipelineGeneration?.abort();
  }
}
