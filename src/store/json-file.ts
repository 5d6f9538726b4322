// Reading a whole JSON file (config.json, remote.json, run.json, trigger state), telling "not
// there yet" apart from "there but broken": a broken file is reported, never silently replaced.

import { readFile } from 'node:fs/promises';
import { FactoryError } from '../core/errors';

/**
 * A data file that exists but cannot be used. The message names the file and the problem and
 * asks the user to fix or remove it, e.g. "Cannot read /x/config.json: Unexpected token } in
 * JSON at position 12. Fix or remove the file."
 */
export class CorruptFileError extends FactoryError {
  override name = 'CorruptFileError';
  readonly path: string;
  /** `problem` is a sentence fragment such as a parse error's message. */
  constructor(path: string, problem: string) {
    super(`Cannot read ${path}: ${problem.replace(/\.$/, '')}. Fix or remove the file.`);
    this.path = path;
  }
}

/**
 * The parsed content of the JSON file at `path`, or undefined when there is no such file. A file
 * that does not parse (an empty one included) throws CorruptFileError; other read errors, such as
 * EACCES, are thrown as they are. A leading byte-order mark is ignored. The value is not
 * validated: `T` is the caller's claim.
 */
export async function readJsonFile<T>(path: string): Promise<T | undefined> {
  const text = await readTextFile(path);
  if (text === undefined) return undefined;
  try {
    return JSON.parse(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text) as T;
  } catch (error) {
    throw new CorruptFileError(path, error instanceof Error ? error.message : String(error));
  }
}

/** A file's text (UTF-8), or undefined when it does not exist; other errors are thrown as they are. */
export async function readTextFile(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}
