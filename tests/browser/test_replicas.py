"""A class past one server, as deploy/ runs it but without containers: two ``streamlit run`` replicas sharing
one Postgres, behind Debian's nginx with ``deploy/nginx.conf``. Each browser keeps to its replica (the
kv_replica cookie); a student on one replica answers the question a teacher opened on the other, the
teacher's stage counts the answer, and the reveal reaches the student."""

from __future__ import annotations

import os
import shutil
import tempfile
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.browser.harness import (
    PHONE,
    RERUN_TIMEOUT_S,
    answer_question,
    settled,
    start_class,
    start_streamlit,
)
from tests.services import REPLICA_HEADER, fresh_database, nginx_bin, start_nginx


class Cluster:
    """The replicas' addresses (``host:port``) and nginx's address."""

    def __init__(self, replicas: list[str], url: str) -> None:
        self.replicas, self.url = replicas, url

    def replica_of(self, cookie: str) -> str:
        """The replica nginx sends a browser with ``cookie`` as its kv_replica cookie to."""
        ask = urllib.request.Request(self.url + "/_stcore/health", headers={"Cookie": f"kv_replica={cookie}"})
        with urllib.request.urlopen(ask, timeout=10) as reply:
            return reply.headers[REPLICA_HEADER]


@pytest.fixture(scope="module")
def cluster(postgres: str) -> Iterator[Cluster]:
    if nginx_bin() is None:
        if os.environ.get("CI") == "true":
            pytest.fail("CI runs the replicas behind nginx: apt-get install -y nginx")
        pytest.skip("no nginx: apt-get install -y nginx")
    database = fresh_database(postgres)
    servers = [start_streamlit(env={"KERNELVIZ_CLASS_DB": database}) for _ in range(2)]
    folder = Path(tempfile.mkdtemp(prefix="kv-nginx-"))
    proxy = None
    try:
        for server in servers:
            server.wait_healthy()
        replicas = [server.url.removeprefix("http://") for server in servers]
        proxy, url = start_nginx(folder, replicas)
        yield Cluster(replicas, url)
    finally:
        if proxy is not None:
            proxy.terminate()
            proxy.wait(timeout=10)
        for server in servers:
            server.stop()
        shutil.rmtree(folder, ignore_errors=True)


def _browser_on(browser: Any, cluster: Cluster, cookie: str, **options: Any) -> Any:
    context = browser.new_context(**options)
    host = cluster.url.removeprefix("http://").split(":")[0]
    context.add_cookies([{"name": "kv_replica", "value": cookie, "domain": host, "path": "/"}])
    return context.new_page()


def test_a_student_on_one_replica_answers_a_teacher_on_the_other(cluster: Cluster, browser: Any) -> None:
    teacher_cookie = "teacher"
    teacher_replica = cluster.replica_of(teacher_cookie)
    student_cookie = next(c for c in (f"student-{k}" for k in range(64))
                          if cluster.replica_of(c) != teacher_replica)
    assert {teacher_replica, cluster.replica_of(student_cookie)} == set(cluster.replicas)
    stage = _browser_on(browser, cluster, teacher_cookie, viewport={"width": 1280, "height": 720})
    code = start_class(stage, cluster.url)
    phone = _browser_on(browser, cluster, student_cookie, **PHONE)
    phone.goto(f"{cluster.url}/?join={code}")
    settled(phone)
    answer_question(phone, 5, "ArrowRight")
    stage.wait_for_function("() => /Answers so far\\s*1/.test(document.body.innerText)",
                            timeout=RERUN_TIMEOUT_S * 1e3)
    stage.get_by_role("button", name="Reveal the class's answers").click()
    phone.get_by_text("The computed answer:").wait_for(timeout=RERUN_TIMEOUT_S * 1e3)
    assert "1 of 1" in phone.inner_text("body") or "0 of 1" in phone.inner_text("body")
    for page in (stage, phone):
        page.context.close()
