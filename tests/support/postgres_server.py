"""A real PostgreSQL server for the persistence tests: the distribution's
`postgresql` package (the Makefile's `postgres` target installs it), started
from `initdb` in a throw-away folder, listening on a free loopback port, with
fsync off (nothing here must survive a power cut). `database(name)` creates a
fresh database and gives its SQLAlchemy URL.

PostgreSQL refuses to run as root, and CI runs as root: then the server runs
as the `postgres` system user the package creates, in a folder made for it
outside pytest's private (mode 0700) temporary tree."""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from tests.support.redis_server import free_port

SUPERUSER = "chunklab"


def _binaries() -> Path:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    if not found:
        raise RuntimeError("PostgreSQL is not installed: run `make postgres` (apt-get install postgresql)")
    return Path(found[-1]).parent


class PostgresServer:
    def __init__(self) -> None:
        self._bin = _binaries()
        self._as_root = os.geteuid() == 0
        self.folder = Path(tempfile.mkdtemp(prefix="chunklab-postgres-"))
        if self._as_root:
            account = pwd.getpwnam("postgres")
            os.chown(self.folder, account.pw_uid, account.pw_gid)
        self.port = free_port()
        data = self.folder / "data"
        self._run(
            "initdb", "-D", str(data), "-U", SUPERUSER, "--auth=trust", "-E", "UTF8", "--locale=C.UTF-8", "--no-sync"
        )
        self._process = subprocess.Popen(
            self._command(
                "postgres",
                "-D",
                str(data),
                "-p",
                str(self.port),
                "-h",
                "127.0.0.1",
                "-k",
                str(self.folder),
                "-c",
                "fsync=off",
                "-c",
                "synchronous_commit=off",
                "-c",
                "full_page_writes=off",
                "-c",
                "max_connections=200",
            ),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.STDOUT,
        )
        self._wait_ready()

    def _command(self, tool: str, *args: str) -> list[str]:
        command = [str(self._bin / tool), *args]
        return ["runuser", "-u", "postgres", "--", *command] if self._as_root else command

    def _run(self, tool: str, *args: str) -> None:
        done = subprocess.run(self._command(tool, *args), capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError(f"{tool} failed: {done.stderr.strip() or done.stdout.strip()}")

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                raise RuntimeError(f"postgres exited with code {self._process.returncode} before it was ready")
            ready = subprocess.run(
                self._command("pg_isready", "-h", "127.0.0.1", "-p", str(self.port)), capture_output=True
            )
            if ready.returncode == 0:
                return
            time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"postgres did not answer on port {self.port}")

    def url(self, database: str = "postgres") -> str:
        return f"postgresql+psycopg://{SUPERUSER}@127.0.0.1:{self.port}/{database}"

    def database(self, name: str) -> str:
        """A new, empty database called `name`; its SQLAlchemy URL."""
        self._run("createdb", "-h", "127.0.0.1", "-p", str(self.port), "-U", SUPERUSER, name)
        return self.url(name)

    def stop(self) -> None:
        if self._process.poll() is None:
            self._process.terminate()
            try:
                self._process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()
        shutil.rmtree(self.folder, ignore_errors=True)
