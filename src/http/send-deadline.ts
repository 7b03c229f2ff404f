import type { Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { performance } from 'node:perf_hooks';

/** What one connection was sending when it was last looked at, and since when. */
interface Watch {
  response: ServerResponse | null;
  since: number;
}

/**
 * The send deadline of answers: an answer whose first bytes have gone out must be handed whole
 * to the operating system within `deadlineMs`, or its connection is destroyed. A client that
 * reads slowly or not at all (a slow-read attack) otherwise holds its connection, its socket
 * buffers and any answers it pipelined behind for as long as it likes: Node's request deadline
 * stops counting once the request has arrived, and a socket's idle timeout is reset by every
 * few bytes it reads.
 *
 * Nothing is done per request: one timer walks the open connections every `intervalMs` and
 * looks at the answer Node is writing on each (the one it assigned to the socket; pipelined ones
 * wait behind it). The deadline is counted from the first walk that saw the answer unfinished,
 * so a connection is cut between `deadlineMs` and `deadlineMs + 2 * intervalMs` after its answer
 * started, never before. The handler's own time is not counted: an answer starts with its
 * headers. Its request line says `request aborted`, with the status that was being sent.
 */
export function enforceSendDeadline(server: Server, deadlineMs: number, intervalMs: number): void {
  const connections = new Map<Socket, Watch>();
  server.on('connection', (socket: Socket) => {
    connections.set(socket, { response: null, since: 0 });
    socket.once('close', () => connections.delete(socket));
  });

  const check = (): void => {
    const now = performance.now();
    for (const [socket, watch] of connections) {
      const response = sendingOn(socket);
      if (response === null) {
        watch.response = null;
      } else if (watch.response !== response) {
        watch.response = response;
        watch.since = now;
      } else if (now - watch.since >= deadlineMs) {
        socket.destroy();
      }
    }
  };
  const timer = setInterval(check, intervalMs);
  // The walk never keeps a process alive on its own, and stops with the server.
  timer.unref();
  server.once('close', () => clearInterval(timer));
}

/** The answer being written on `socket`, if its headers are out and its last byte is not. */
function sendingOn(socket: Socket): ServerResponse | null {
  // Node's own link from a socket to the response it is writing (cleared when it finishes).
  const response = (socket as { _httpMessage?: ServerResponse | null })._httpMessage ?? null;
  return response !== null && response.headersSent && !response.writableFinished ? response : null;
}
