"""Drives `codeport mcp` with the official MCP Python SDK, as a client we
did not write would: its own stdio client (which starts the server) or its
own streamable HTTP client. A cross-check run by mcp_test.go; not product
code.

    python mcp_client.py --mode auto|legacy stdio CODEPORT -- [ARG...]
    python mcp_client.py --mode auto|legacy http URL [TOKEN]

Exits 0 and prints one "ok" line per check when everything holds; raises
otherwise.
"""

import argparse
import base64
import os
import sys
import time
import warnings

import anyio
import httpx2
import mcp_types as types
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

# The SDK warns that logging is deprecated from protocol 2026-07-28 on; this
# check exercises it on purpose.
warnings.simplefilter("ignore")


def check(cond, what):
    if not cond:
        raise AssertionError(what)


def ok(what):
    print("ok:", what, flush=True)


def text_of(result):
    return "".join(c.text for c in result.content if isinstance(c, types.TextContent))


async def call(client, name, args, **kw):
    result = await client.call_tool(name, args, **kw)
    check(isinstance(result, types.CallToolResult), f"{name}: {result!r}")
    return result


async def exercise(client, logs):
    tools = {t.name: t for t in (await client.list_tools()).tools}
    check({"run_python", "create_session", "destroy_session"} <= set(tools), f"tools: {sorted(tools)}")
    run_python = tools["run_python"]
    check("Python" in (run_python.description or ""), f"run_python description: {run_python.description!r}")
    check(run_python.input_schema.get("required") == ["code"], f"run_python schema: {run_python.input_schema}")
    check(run_python.output_schema is not None, "run_python has no output schema")
    ok(f"lists tools {sorted(tools)}")

    # Stateful cells in a session.
    result = await call(client, "create_session", {})
    check(not result.is_error, f"create_session: {text_of(result)}")
    sid = result.structured_content["session_id"]
    check(sid and sid in text_of(result), f"create_session: {result}")
    result = await call(client, "run_python", {"code": "x = 41", "session_id": sid})
    check(not result.is_error and result.structured_content["outcome"] == "completed", f"x = 41: {result}")
    result = await call(client, "run_python", {"code": "print(x + 1)", "session_id": sid})
    sc = result.structured_content
    check(sc["stdout"] == "42\n" and sc["return_code"] == 0 and sc["files"] == [], f"print(x + 1): {sc}")
    check(text_of(result) == "stdout:\n42\nreturn_code: 0", f"print(x + 1) text: {text_of(result)!r}")
    ok("runs stateful cells in a session")

    # A produced file: embedded in the result, and read back as a resource.
    code = "open('out.csv', 'w').write('a,b\\n1,2\\n')\nopen('raw.bin', 'wb').write(bytes(range(256)))\nprint('wrote')"
    result = await call(client, "run_python", {"code": code, "session_id": sid})
    files = {f["filename"]: f for f in result.structured_content["files"]}
    check(set(files) == {"out.csv", "raw.bin"} and all(f["embedded"] for f in files.values()), f"files: {files}")
    check("files: out.csv, raw.bin" in text_of(result), f"text: {text_of(result)!r}")
    embedded = {str(c.resource.uri): c.resource for c in result.content if isinstance(c, types.EmbeddedResource)}
    csv_uri, bin_uri = files["out.csv"]["uri"], files["raw.bin"]["uri"]
    check(isinstance(embedded.get(csv_uri), types.TextResourceContents) and embedded[csv_uri].text == "a,b\n1,2\n",
          f"embedded out.csv: {embedded.get(csv_uri)!r}")
    check(isinstance(embedded.get(bin_uri), types.BlobResourceContents)
          and base64.b64decode(embedded[bin_uri].blob) == bytes(range(256)), f"embedded raw.bin: {embedded.get(bin_uri)!r}")
    read = await client.read_resource(csv_uri)
    check(len(read.contents) == 1 and read.contents[0].text == "a,b\n1,2\n", f"read out.csv: {read}")
    check((read.contents[0].mime_type or "").startswith("text/csv"), f"out.csv media type: {read.contents[0].mime_type}")
    read = await client.read_resource(bin_uri)
    check(base64.b64decode(read.contents[0].blob) == bytes(range(256)), f"read raw.bin: {read}")
    templates = (await client.list_resource_templates()).resource_templates
    check([t.uri_template for t in templates] == ["codeport://sessions/{session_id}/outputs/{file_id}"], f"templates: {templates}")
    ok("reads a produced file through resources/read")

    # A chart: the PNG a cell writes comes back as an image the client shows.
    code = ("import struct, zlib\n"
            "def chunk(t, d): return struct.pack('>I', len(d)) + t + d + struct.pack('>I', zlib.crc32(t + d))\n"
            "rows = b''.join(b'\\x00' + bytes(range(y, y + 30)) for y in range(7))\n"
            "open('chart.png', 'wb').write(b'\\x89PNG\\r\\n\\x1a\\n' + chunk(b'IHDR', struct.pack('>IIBBBBB', 10, 7, 8, 2, 0, 0, 0))"
            " + chunk(b'IDAT', zlib.compress(rows)) + chunk(b'IEND', b''))\n")
    result = await call(client, "run_python", {"code": code, "session_id": sid})
    images = [c for c in result.content if isinstance(c, types.ImageContent)]
    check(len(images) == 1 and images[0].mime_type == "image/png", f"chart.png: {result.content!r}")
    png = base64.b64decode(images[0].data)
    check(png[:8] == b"\x89PNG\r\n\x1a\n" and png[12:16] == b"IHDR" and png[16:24] == bytes([0, 0, 0, 10, 0, 0, 0, 7]),
          f"chart.png is not the 10x7 PNG written: {png[:24]!r}")
    files = result.structured_content["files"]
    check(len(files) == 1 and files[0]["filename"] == "chart.png" and files[0]["size"] == len(png), f"chart.png file: {files}")
    ok("returns a PNG the cell wrote as ImageContent")

    # A matplotlib figure left open at the cell's end, where the server has
    # matplotlib (the scientific profile): an image the client shows.
    result = await call(client, "run_python", {"code": "import importlib.util\nprint(importlib.util.find_spec('matplotlib') is not None)", "session_id": sid})
    if result.structured_content["stdout"] == "True\n":
        code = "import matplotlib.pyplot as plt\nplt.plot([1, 4, 9, 16])\nplt.title('squares');"
        result = await call(client, "run_python", {"code": code, "session_id": sid})
        images = [c for c in result.content if isinstance(c, types.ImageContent)]
        check(len(images) == 1 and images[0].mime_type == "image/png", f"figure: {result.content!r}")
        png = base64.b64decode(images[0].data)
        check(png[:8] == b"\x89PNG\r\n\x1a\n" and png[12:16] == b"IHDR", f"the figure is not a PNG: {png[:24]!r}")
        width, height = int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")
        check(200 < width <= 640 and 200 < height <= 480, f"the figure is {width}x{height}")
        ok("returns a matplotlib figure as ImageContent")

    # Streamed output: progress notifications (and log messages) carry the
    # output while the cell runs, before the result.
    progress = []

    async def on_progress(value, total, message):
        progress.append((time.monotonic(), value, message))

    logs.clear()
    code = "import sys, time\nprint('tick 0', flush=True)\ntime.sleep(1)\nprint('tock', file=sys.stderr, flush=True)\nprint('tick 1')"
    result = await call(client, "run_python", {"code": code, "session_id": sid, "timeout_seconds": 30}, progress_callback=on_progress)
    done = time.monotonic()
    sc = result.structured_content
    check(sc["stdout"] == "tick 0\ntick 1\n" and sc["stderr"] == "tock\n", f"streamed cell: {sc}")
    # The SDK runs each callback in a task of its own: let them all run.
    def arrived():
        return (len("".join(m for _, _, m in progress)) >= len(sc["stdout"] + sc["stderr"])
                and "".join(str(p.data) for p in logs if p.logger == "stdout") == sc["stdout"])

    with anyio.move_on_after(10):
        while not arrived():
            await anyio.sleep(0.01)
    check(arrived(), f"within 10s of the result: progress {progress}, log messages {logs}")
    in_order = sorted(progress)
    check(all(a[1] < b[1] for a, b in zip(in_order, in_order[1:])), f"progress does not grow: {progress}")
    check("".join(m for _, _, m in in_order) == "tick 0\ntock\ntick 1\n", f"progress messages: {progress}")
    first = min(t for t, _, _ in progress)
    check(done - first > 0.5, f"the first notification came {done - first:.3f}s before the result, not while the cell ran")
    check({(p.logger, p.level) for p in logs} == {("stdout", "info"), ("stderr", "warning")}, f"log messages: {logs}")
    ok(f"streams output as progress notifications ({len(progress)}) and log messages ({len(logs)})")

    # Errors the model can read.
    result = await call(client, "run_python", {"code": "1/0", "session_id": sid})
    check(not result.is_error and result.structured_content["outcome"] == "program_error"
          and "ZeroDivisionError" in result.structured_content["stderr"], f"1/0: {result}")
    result = await call(client, "run_python", {"code": "print(1)", "session_id": "no-such-session"})
    check(result.is_error and "create_session" in text_of(result), f"unknown session: {result}")
    ok("reports program errors as results and port errors as tool errors")

    # A call without a session: its files come embedded.
    result = await call(client, "run_python", {"code": "open('r.txt', 'w').write('fresh')\nprint('x' in dir())"})
    sc = result.structured_content
    check(sc["stdout"] == "False\n" and sc["files"][0]["embedded"] and "uri" not in sc["files"][0], f"session-less call: {sc}")
    ok("runs a cell without a session")

    result = await call(client, "destroy_session", {"session_id": sid})
    check(result.structured_content == {"session_id": sid, "destroyed": True}, f"destroy_session: {result}")
    try:
        await client.read_resource(csv_uri, cache_mode="bypass")
    except MCPError as e:
        check("not found" in str(e).lower(), f"read after destroy: {e}")
    else:
        raise AssertionError("a destroyed session's file is still readable")
    ok("destroys the session")


async def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mode", default="auto")
    ap.add_argument("transport", choices=["stdio", "http"])
    ap.add_argument("target")
    ap.add_argument("rest", nargs="*")
    args = ap.parse_args()

    logs = []

    async def on_log(params):
        logs.append(params)

    # Log messages: asked for with each request from protocol 2026-07-28 on
    # (log_level), with logging/setLevel before it (opt_in).
    kw = {"mode": args.mode, "logging_callback": on_log, "log_level": "info"}

    async def opt_in(client):
        print("protocol", client.protocol_version, flush=True)
        if client.protocol_version < "2026-07-28":
            await client.set_logging_level("info")

    if args.transport == "stdio":
        server = StdioServerParameters(command=args.target, args=["mcp", *args.rest], env=dict(os.environ))
        async with Client(server, **kw) as client:
            await opt_in(client)
            await exercise(client, logs)
        return
    headers = {"Authorization": "Bearer " + args.rest[0]} if args.rest else None
    async with httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30, read=300)) as http:
        async with Client(streamable_http_client(args.target, http_client=http), **kw) as client:
            await opt_in(client)
            await exercise(client, logs)


if __name__ == "__main__":
    anyio.run(main)
    sys.exit(0)
