"""Calls OpenAI's Containers API of a running `codeport serve` with the
official openai SDK and checks every answer.

Usage: containers_api.py BASE_URL KEY_A KEY_B MARKER

KEY_A and KEY_B are two tenants' keys; the server runs with
max-containers 2 and a 64 KiB file limit. MARKER is put in the uploaded
file, so that the Go test can check the server's log never holds it.
Prints "ok" when every check holds, else each problem on a line and
exits 1.
"""

import sys

import openai

base, key_a, key_b, marker = sys.argv[1:5]
# No retries: an answer that a retry would hide must show.
a = openai.OpenAI(base_url=base + "/v1", api_key=key_a, max_retries=0)
b = openai.OpenAI(base_url=base + "/v1", api_key=key_b, max_retries=0)
problems = []


def check(cond, what):
    if not cond:
        problems.append(what)


def expect(exc_type, what, fn, status=None, code=None, param=None):
    """Runs fn, which must raise exc_type (with status, code and param
    when given); returns the exception."""
    try:
        fn()
    except exc_type as e:
        if status is not None and e.status_code != status:
            problems.append(f"{what}: status {e.status_code}, want {status}")
        if code is not None and e.code != code:
            problems.append(f"{what}: code {e.code!r}, want {code!r}")
        if param is not None and e.param != param:
            problems.append(f"{what}: param {e.param!r}, want {param!r}")
        if not isinstance(e.body, dict) or not e.message:
            problems.append(f"{what}: the error is not in OpenAI's shape: {e.body!r}")
        return e
    except Exception as e:  # noqa: BLE001 - any other is the problem
        problems.append(f"{what}: raised {type(e).__name__}: {e}, want {exc_type.__name__}")
        return None
    problems.append(f"{what}: no error, want {exc_type.__name__}")
    return None


# Containers.
c1 = a.containers.create(name="first", expires_after={"anchor": "last_active_at", "minutes": 10})
check(c1.id.startswith("cntr_"), f"create: id {c1.id!r}")
check(c1.object == "container" and c1.name == "first" and c1.status == "running", f"create: {c1!r}")
check(c1.expires_after is not None and c1.expires_after.anchor == "last_active_at" and c1.expires_after.minutes == 10,
      f"create: expires_after {c1.expires_after!r}")
check(isinstance(c1.created_at, int) and c1.last_active_at == c1.created_at, f"create: times {c1.created_at!r} {c1.last_active_at!r}")
check(c1.network_policy is not None and c1.network_policy.type == "disabled", f"create: network_policy {c1.network_policy!r}")
c2 = a.containers.create(name="second")
check(c2.expires_after is not None and c2.expires_after.minutes == 20, f"create: default expiry {c2.expires_after!r}")

first = a.containers.list(limit=1)
check([c.id for c in first.data] == [c2.id] and first.has_more, f"list limit=1: {[c.id for c in first.data]} {first.has_more}")
second = a.containers.list(limit=1, after=c2.id)
check([c.id for c in second.data] == [c1.id] and not second.has_more, f"list after: {[c.id for c in second.data]}")
every = [c.id for c in a.containers.list(limit=1)]  # the SDK follows the pages
check(every == [c2.id, c1.id], f"list, every page: {every}")
check([c.id for c in a.containers.list(order="asc")] == [c1.id, c2.id], "list order=asc")
check([c.id for c in a.containers.list(name="second")] == [c2.id], "list name=second")
got = a.containers.retrieve(c1.id)
check(got.id == c1.id and got.name == "first" and got.object == "container", f"retrieve: {got!r}")

expect(openai.BadRequestError, "a third container", lambda: a.containers.create(name="third"),
       status=400, code="container_limit_reached")
expect(openai.BadRequestError, "an expiry of another anchor",
       lambda: a.containers.create(name="x", expires_after={"anchor": "created_at", "minutes": 5}), param="expires_after.anchor")
expect(openai.BadRequestError, "a memory limit the backend does not give",
       lambda: a.containers.create(name="x", memory_limit="64g"), param="memory_limit")

# Another tenant: A's container is unknown to B, and B's list is its own.
expect(openai.NotFoundError, "B retrieving A's container", lambda: b.containers.retrieve(c1.id), status=404)
expect(openai.NotFoundError, "B deleting A's container", lambda: b.containers.delete(c1.id), status=404)
expect(openai.NotFoundError, "B listing A's container's files", lambda: b.containers.files.list(c1.id), status=404)
check(list(b.containers.list()) == [], "B's list holds A's containers")
cb = b.containers.create(name="b's")  # B has a count of its own
check([c.id for c in b.containers.list()] == [cb.id], "B's list")

# Files.
data = b"a,b\n1,2\n" + marker.encode() + b"\n"
f = a.containers.files.create(c1.id, file=("data.csv", data))
check(f.id.startswith("cfile_") and f.object == "container.file", f"upload: {f!r}")
check(f.bytes == len(data) and f.container_id == c1.id and f.source == "user", f"upload: {f!r}")
check(f.path.endswith("/data.csv"), f"upload: path {f.path!r}")
listed = a.containers.files.list(c1.id)
check([x.id for x in listed.data] == [f.id] and not listed.has_more, f"files.list: {listed!r}")
fr = a.containers.files.retrieve(f.id, container_id=c1.id)
check(fr.id == f.id and fr.bytes == len(data) and fr.path == f.path, f"files.retrieve: {fr!r}")
content = a.containers.files.content.retrieve(f.id, container_id=c1.id)
check(content.read() == data, "files.content: the bytes differ")
expect(openai.NotFoundError, "B reading A's file",
       lambda: b.containers.files.content.retrieve(f.id, container_id=c1.id), status=404)

expect(openai.BadRequestError, "a file by id (serve has no file store)",
       lambda: a.containers.files.create(c1.id, file_id="file-abc"), param="file_id")
expect(openai.BadRequestError, "a file name with a path",
       lambda: a.containers.files.create(c1.id, file=("../up.txt", b"x")), param="file")
expect(openai.APIStatusError, "a file over the file limit",
       lambda: a.containers.files.create(c1.id, file=("big.bin", b"x" * (100 << 10))), status=413, code="file_too_large")

check(a.containers.files.delete(f.id, container_id=c1.id) is None, "files.delete returns something")
check(list(a.containers.files.list(c1.id)) == [], "files.list after the delete")
expect(openai.NotFoundError, "a deleted file", lambda: a.containers.files.retrieve(f.id, container_id=c1.id), status=404)

# Deletion.
check(a.containers.delete(c1.id) is None, "delete returns something")
expect(openai.NotFoundError, "a deleted container", lambda: a.containers.retrieve(c1.id), status=404, code="container_not_found")
expect(openai.NotFoundError, "a file of a deleted container", lambda: a.containers.files.list(c1.id), status=404)
a.containers.delete(c2.id)
b.containers.delete(cb.id)
check(list(a.containers.list()) == [], "A's list after the deletes")

# The credential.
bad = openai.OpenAI(base_url=base + "/v1", api_key="not-a-key-of-anyone-0123456789", max_retries=0)
expect(openai.AuthenticationError, "an unknown key", lambda: bad.containers.list(), status=401)

if problems:
    print("\n".join(problems))
    sys.exit(1)
print("ok")
