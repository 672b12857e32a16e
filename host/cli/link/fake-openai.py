#!/usr/bin/env python3
"""A loopback OpenAI chat-completions server for profile.sh.

It streams (SSE, in the wire format of OpenAI's API) a call of the tool
named on the command line, and then, for the request that carries its
result, an answer. It prints its port on stdout and serves until killed.
"""
import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

TOOL = sys.argv[1]


def chunk(delta, finish=None):
    return {
        "id": "chatcmpl-profile",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "m",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        answered = any(m.get("role") == "tool" for m in body["messages"])
        if answered:
            events = [
                chunk({"role": "assistant", "content": ""}),
                chunk({"content": "the tool "}),
                chunk({"content": "answered"}),
                chunk({}, "stop"),
            ]
        else:
            call = {"index": 0, "id": "call_1", "type": "function",
                    "function": {"name": TOOL, "arguments": ""}}
            events = [
                chunk({"role": "assistant", "content": None, "tool_calls": [call]}),
                chunk({"tool_calls": [{"index": 0, "function": {"arguments": '{"data": '}}]}),
                chunk({"tool_calls": [{"index": 0, "function": {"arguments": '"x"}'}}]}),
                chunk({}, "tool_calls"),
            ]
        events.append({**chunk({}), "choices": [],
                       "usage": {"prompt_tokens": 9, "completion_tokens": 3, "total_tokens": 12}})
        data = b"".join(b"data: " + json.dumps(e).encode() + b"\n\n" for e in events)
        data += b"data: [DONE]\n\n"
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
print(server.server_address[1], flush=True)
server.serve_forever()
