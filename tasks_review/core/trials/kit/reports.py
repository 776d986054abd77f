"""The report channel: the grader's Unix socket, where instrumented runners report.

Standard library only (Python 3.8+); imports its kit siblings from its own folder.
"""

import json
import os
import socket
import struct
import threading
import time

import judging

MAX_LINE = 1 << 20
MAX_MESSAGES = judging.MAX_CASES + 100
MAX_CONNECTIONS = judging.MAX_SESSIONS * 4
MAX_TEST_FILES = 4096  # node test-file processes, one per file
ACCEPT_POLL = 0.05  # seconds


def parent_of(pid):
    try:
        with open(f"/proc/{pid}/stat") as handle:
            text = handle.read()
        return int(text.rsplit(")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return None


class Session:
    def __init__(self, kind, pid, hello):
        self.kind = kind
        self.pid = pid
        self.argv = [str(a) for a in (hello.get("argv") or ())][:50]
        self.cases = []
        self.seen = set()
        self.copies = {}  # name -> {"of": id, "fail": bool}
        self.problems = []
        self.complete = False
        self.closed = False
        self.baseline = False

    def case(self, message):
        if self.complete:
            self.problems.append("it reported after its end (an exit hook?)")
            return
        case_id, outcome = str(message.get("id")), str(message.get("outcome"))
        if case_id in self.seen:
            self.problems.append(f"{case_id} was reported twice")
        self.seen.add(case_id)
        if len(self.cases) < judging.MAX_CASES:
            self.cases.append([case_id, outcome])

    def record(self, children=()):
        copies = dict(self.copies)
        for child in children:
            copies.update(child.copies)
        return {
            "kind": self.kind,
            "pid": self.pid,
            "argv": self.argv,
            "complete": self.complete,
            "problems": self.problems[:20],
            "cases": self.cases,
            "copies": copies,
            "baseline": self.baseline,
        }


class Reports:
    """The grader's end of the report channel: a Unix socket in the root-owned kit folder.

    Every instrumented runner connects itself and says what it is; the peer's pid and uid come
    from the kernel (SO_PEERCRED), not from the message. Only the check's own user (``uid``)
    may report: a peer of any other uid is untrusted, and so is an overflow (more connections,
    sessions or test files than the caps: forged sessions sent first must not push the real
    one out of the record); either is a finding that scores 0. Test results are checked as
    they arrive (twice, after the end); whatever else connects only adds sessions that must be
    sound too.
    """

    def __init__(self, path, planner, uid):
        self.planner = planner
        self.uid = uid
        self.lock = threading.Condition()
        self.sessions = []  # unittest, pytest and node-test sessions
        self.children = []  # node test-file processes: their plans
        self.strays = []
        self.threads = []
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listener.bind(path)
        os.chmod(path, 0o666)
        self.listener.listen(64)
        # accept() wakes now and then to see whether the grader is closing the channel
        self.listener.settimeout(ACCEPT_POLL)
        self.stopping = False
        self.acceptor = threading.Thread(target=self._accept, daemon=True)
        self.acceptor.start()

    def _accept(self):
        while True:
            try:
                conn, _ = self.listener.accept()
            except socket.timeout:  # noqa: UP041 (TimeoutError only from 3.10; the kit runs on 3.8)
                if self.stopping:  # and nothing is left waiting in the backlog
                    return
                continue
            except OSError:
                return
            if len(self.threads) >= MAX_CONNECTIONS:
                conn.close()
                self._untrusted(f"more than {MAX_CONNECTIONS} connections to the report channel")
                continue
            thread = threading.Thread(target=self._serve, args=(conn,), daemon=True)
            self.threads.append(thread)
            thread.start()

    def close(self):
        # Every process that connected before the end is heard, those still in the backlog too:
        # the acceptor stops only once accept() finds nothing waiting.
        self.stopping = True
        self.acceptor.join(5)
        self.listener.close()
        for thread in list(self.threads):
            thread.join(5)

    def _serve(self, conn):
        session = None
        try:
            creds = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
            pid, uid, _ = struct.unpack("3i", creds)
            if uid != self.uid:
                self._untrusted(f"a process of uid {uid}, not the check's, reported ({pid})")
                return
            reader = conn.makefile("rb")
            hello = _read(reader)
            kind = hello.get("kind") if hello and hello.get("t") == "hello" else None
            if kind == "status":
                _send(conn, {"t": "status", "status": self.status_of(hello)})
            elif kind == "node-file":
                self._node_file(conn, reader, pid, hello)
            elif kind in (
                judging.UNITTEST,
                judging.PYTEST,
                judging.NODE_TEST,
                judging.GO_TEST,
                judging.CARGO_TEST,
            ):
                session = Session(kind, pid, hello)
                with self.lock:
                    if len(self.sessions) < judging.MAX_SESSIONS:
                        self.sessions.append(session)
                    else:
                        self.strays.append(
                            f"more runner sessions than the {judging.MAX_SESSIONS} recorded"
                        )
                self._runner(conn, reader, session)
            else:
                with self.lock:
                    self.strays.append(f"a process connected without saying what it is ({pid})")
        except (OSError, ValueError) as exc:
            if session is not None:
                session.problems.append(f"its report broke off: {type(exc).__name__}")
        finally:
            if session is not None:
                with self.lock:
                    session.closed = True
                    self.lock.notify_all()
            conn.close()

    def _runner(self, conn, reader, session):
        _send(conn, {"t": "ok"})
        for _ in range(MAX_MESSAGES):
            message = _read(reader)
            if message is None:
                return
            kind = message.get("t")
            if kind == "tests" and session.kind in (
                judging.UNITTEST,
                judging.PYTEST,
                judging.GO_TEST,
            ):
                if session.copies or session.cases:
                    session.problems.append("it asked for a second plan")
                    continue
                plans = self.planner.go if session.kind == judging.GO_TEST else self.planner.python
                plan, problems = plans(message.get("tests") or [])
                session.problems += problems
                session.baseline = self.planner.baseline
                session.copies = {e["name"]: {"of": e["of"], "fail": e["fail"]} for e in plan}
                _send(conn, {"t": "plan", "copies": plan, "baseline": self.planner.baseline})
            elif kind == "case":
                session.case(message)
            elif kind == "problem":
                # What a runner found wrong with its own run (cargo_harness: output that does
                # not add up). It can only cost the submission its reward, never earn one.
                session.problems.append(str(message.get("text"))[:300])
            elif kind == "end":
                if session.complete:
                    session.problems.append("it ended twice")
                session.complete = True
            else:
                session.problems.append(f"an unexpected message {str(kind)[:40]!r}")
        session.problems.append("it sent more messages than any real run does")

    def _node_file(self, conn, reader, pid, hello):
        plan = self.planner.node_file(str(hello.get("file") or ""))
        child = Session("node-file", pid, hello)
        child.baseline = self.planner.baseline
        if not self.planner.baseline:
            child.copies = {c["name"]: {"of": c["of"], "fail": c["fail"]} for c in plan["copies"]}
        child.parent = parent_of(pid)
        with self.lock:
            if len(self.children) < MAX_TEST_FILES:
                self.children.append(child)
            else:
                self.strays.append(f"more than {MAX_TEST_FILES} node test-file processes")
        _send(conn, {"t": "plan", **plan})
        # In the check in the image the test process says which test each name copied.
        kinds = {n: False for n in plan.get("pass_names", ())}
        kinds.update({n: True for n in plan.get("fail_names", ())})
        for _ in range(MAX_MESSAGES):
            message = _read(reader)
            if message is None:
                return
            name = str(message.get("name"))
            if message.get("t") == "copy" and name in kinds and name not in child.copies:
                child.copies[name] = {"of": str(message.get("of")), "fail": kinds[name]}

    def _untrusted(self, why):
        with self.lock:
            if why not in self.strays:
                self.strays.append(why)

    def status_of(self, hello):
        """The exit status a node runner would have had without its controls."""
        pid, status = hello.get("pid"), hello.get("status")
        status = status if isinstance(status, int) else 1
        deadline = time.monotonic() + 10
        with self.lock:
            while True:
                found = [s for s in self.sessions if s.pid == pid and s.kind == judging.NODE_TEST]
                if found and all(s.closed for s in found) or time.monotonic() > deadline:
                    break
                self.lock.wait(0.1)
            if len(found) != 1:
                return status or 1
            return judging.runner_status(self._record(found[0]), status)

    def _record(self, session):
        kids = [
            c
            for c in self.children
            if session.kind == judging.NODE_TEST and c.parent == session.pid
        ]
        record = session.record(kids)
        if kids:
            record["baseline"] = any(c.baseline for c in kids)
        return record

    def records(self):
        with self.lock:
            records = [self._record(s) for s in self.sessions]
            parents = {s.pid for s in self.sessions if s.kind == judging.NODE_TEST}
            strays = list(self.strays)
            strays += [
                f"a node test process ({c.pid}) ran outside any instrumented runner"
                for c in self.children
                if c.parent not in parents
            ]
        return records, strays


def _read(reader):
    line = reader.readline(MAX_LINE)
    if not line:
        return None
    if not line.endswith(b"\n"):
        raise ValueError("a message longer than the channel allows")
    message = json.loads(line)
    if not isinstance(message, dict):
        raise ValueError("a message that is not an object")
    return message


def _send(conn, message):
    conn.sendall(json.dumps(message).encode() + b"\n")
