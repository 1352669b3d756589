# A standard-library HTTP server for the supervisor's tests.
# GET /        → "hello from <GREETING>" (GREETING from the environment)
# GET /env/KEY → the value of the environment variable KEY
# GET /crash   → the process exits with code 1
# With EXIT_AFTER_ANSWER=N it exits with code N a moment after it first
# answered (an app that dies right after its start, however slow that is).
import os, sys, threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

class Handler(BaseHTTPRequestHandler):
    def do_GET(self):
        if self.path == "/crash":
            print("crashing on purpose", file=sys.stderr, flush=True)
            os._exit(1)
        if self.path.startswith("/env/"):
            body = os.environ.get(self.path[5:], "")
        else:
            body = "hello from " + os.environ.get("GREETING", "nobody")
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.end_headers()
        self.wfile.write(body.encode())
        code = os.environ.get("EXIT_AFTER_ANSWER")
        if code:
            threading.Timer(0.2, os._exit, [int(code)]).start()

    def log_message(self, fmt, *args):
        print("request " + self.path, flush=True)

port = int(os.environ["PORT"])
print("listening on", port, flush=True)
ThreadingHTTPServer((os.environ.get("HOST", "0.0.0.0"), port), Handler).serve_forever()
