// A git host for tests: git's own smart HTTP server (`git http-backend`, run as CGI per request) on
// a real node:http server on 127.0.0.1, serving the bare repositories under one folder as
// http://127.0.0.1:<port>/<owner>/<name>.git, so a project's `origin` can have a GitHub-shaped URL
// (owner/name read from it, as from https://github.com/owner/name.git) while fetches and pushes
// reach a real bare repository. Pushes are allowed (the CGI is told a user signed in).
import { spawn } from 'node:child_process';
import { createServer, type Server } from 'node:http';

export interface GitHttpServer {
  /** The clone URL of `owner/name` (its bare repository is `<root>/<owner>/<name>.git`). */
  urlOf(fullName: string): string;
  stop(): Promise<void>;
}

export async function startGitHttpServer(root: string): Promise<GitHttpServer> {
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks);
      const url = new URL(request.url ?? '/', 'http://127.0.0.1');
      const cgi = spawn('git', ['http-backend'], {
        env: {
          PATH: process.env.PATH ?? '', GIT_PROJECT_ROOT: root, GIT_HTTP_EXPORT_ALL: '1', REMOTE_USER: 'tester', REMOTE_ADDR: '127.0.0.1',
          REQUEST_METHOD: request.method ?? 'GET', PATH_INFO: decodeURIComponent(url.pathname), QUERY_STRING: url.search.slice(1),
          CONTENT_TYPE: request.headers['content-type'] ?? '', CONTENT_LENGTH: String(body.length),
          ...(request.headers['content-encoding'] ? { HTTP_CONTENT_ENCODING: request.headers['content-encoding'] } : {}),
          ...(request.headers['git-protocol'] ? { GIT_PROTOCOL: String(request.headers['git-protocol']) } : {}),
        },
      });
      const output: Buffer[] = [];
      cgi.stdout.on('data', (chunk: Buffer) => output.push(chunk));
      cgi.stderr.resume();
      cgi.on('close', () => {
        // CGI: header lines, a blank line, the body; `Status:` sets the HTTP status.
        const all = Buffer.concat(output);
        const split = all.indexOf('\r\n\r\n');
        const headerText = split < 0 ? '' : all.subarray(0, split).toString('latin1');
        let status = 200;
        const headers: Record<string, string> = {};
        for (const line of headerText.split('\r\n')) {
          const colon = line.indexOf(':');
          if (colon < 0) continue;
          const name = line.slice(0, colon).trim();
          const value = line.slice(colon + 1).trim();
          if (name.toLowerCase() === 'status') status = Number.parseInt(value, 10) || 500;
          else headers[name] = value;
        }
        response.writeHead(split < 0 ? 500 : status, headers).end(split < 0 ? all : all.subarray(split + 4));
      });
      cgi.stdin.on('error', () => {});
      cgi.stdin.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    urlOf: (fullName) => `http://127.0.0.1:${port}/${fullName}.git`,
    stop: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}
