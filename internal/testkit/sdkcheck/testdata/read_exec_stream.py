"""Read a streamed exec of codeport serve with httpx-sse, a Server-Sent
Events client we did not write.

    python read_exec_stream.py BASE_URL SESSION_ID

Run by internal/testkit/sdkcheck's Go test. The cell prints a line, then waits for
a file that this script uploads only once it has read that line's event:
so the call ends only if its first output arrived while it ran. Checks the
event names and order, that the output events add up to the result's
streams, and that the result event is an exec response. Prints "ok" and
exits 0, or prints what was wrong and exits 1.
"""

import json
import sys

import httpx
from httpx_sse import connect_sse

CODE = (
    "import os, sys, time\n"
    "print('first', flush=True)\n"
    "while not os.path.exists('go'):\n"
    "    time.sleep(0.01)\n"
    "print('warn', file=sys.stderr, flush=True)\n"
    "print('second')\n"
    "6 * 7"
)


def main(base, session):
    problems = []
    names, out, err, result = [], [], [], None
    with httpx.Client(base_url=base, timeout=120) as client:
        body = {"tool": "code_execution", "input": {"code": CODE}, "timeout_seconds": 60}
        with connect_sse(client, "POST", f"/sessions/{session}/exec", json=body) as source:
            if source.response.status_code != 200:
                print(f"status {source.response.status_code}")
                return 1
            for event in source.iter_sse():
                names.append(event.event)
                data = json.loads(event.data)
                if event.event in ("stdout", "stderr"):
                    (out if event.event == "stdout" else err).append(data["text"])
                    if event.event == "stdout" and len(out) == 1:
                        up = client.post(f"/sessions/{session}/files", files={"file": ("go", b"go")})
                        if up.status_code != 201:
                            problems.append(f"upload: {up.status_code} {up.text}")
                elif event.event == "result":
                    result = data
                else:
                    problems.append(f"unexpected event {event.event}: {event.data}")
    if not names or names[0] != "stdout" or names[-1] != "result" or names.count("result") != 1:
        problems.append(f"event order {names}")
    if result is None:
        problems.append("no result event")
    else:
        content = result["result_block"]["content"]
        if content["stdout"] != "first\nsecond\n42\n":
            problems.append(f"result stdout {content['stdout']!r}")
        if "".join(out) != content["stdout"] or "".join(err) != content["stderr"]:
            problems.append(f"events add up to {''.join(out)!r}/{''.join(err)!r}, result {content['stdout']!r}/{content['stderr']!r}")
        if result.get("outcome") != "completed" or content["return_code"] != 0:
            problems.append(f"outcome {result.get('outcome')} rc {content['return_code']}")
    for p in problems:
        print(p)
    if problems:
        return 1
    print("ok", names)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
