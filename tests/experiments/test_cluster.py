"""The local Dask cluster admits only this run's client; remote clusters are checked."""

import socket
import ssl

import pytest
from distributed import Client
from distributed.security import Security

from clamber.exceptions import ConfigError
from clamber.parallel.dask import CHECKED_PACKAGES, DaskEvaluator, check_versions
from clamber.parallel.factory import make_evaluator

REFUSED = (OSError, TimeoutError, TypeError, ValueError)


def _host_port(address):
    host, port = address.split("://", 1)[1].rsplit(":", 1)
    return host, int(port)


def test_run_client_works_and_credentials_are_per_run(dask_two):
    """The evaluator's own client computes; the cluster speaks TLS with credentials made
    for it (another evaluator's would be different)."""
    assert dask_two.address.startswith("tls://")
    assert [o.value for o in dask_two.map(abs, [-2, 3])] == [2, 3]
    assert dask_two.security.tls_ca_file != Security.temporary().tls_ca_file


def test_client_without_the_run_credentials_is_refused(dask_two):
    """A plain-TCP client, a TLS client with other credentials and a TLS client without a
    certificate cannot talk to the scheduler."""
    addr = dask_two.address
    with pytest.raises(REFUSED):
        Client(addr.replace("tls://", "tcp://"), timeout=5, set_as_default=False)
    with pytest.raises(REFUSED):
        Client(addr, security=Security.temporary(), timeout=5, set_as_default=False)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)  # trusts anyone, shows no certificate
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    with socket.create_connection(_host_port(addr), timeout=5) as raw:
        with pytest.raises((ssl.SSLError, ConnectionError)):
            with ctx.wrap_socket(raw) as tls:
                tls.sendall(b"\x00" * 16)
                assert tls.recv(64) == b"", "the scheduler answered a client without a certificate"
                raise ConnectionError("closed without an answer")


def test_workers_refuse_strangers_too(dask_two):
    """The workers' own ports (reached directly, bypassing the scheduler) also require the
    run's certificate."""
    worker = next(iter(dask_two.client.scheduler_info()["workers"]))
    with pytest.raises(REFUSED):
        Client(worker, security=Security.temporary(), timeout=5, set_as_default=False)


def test_version_mismatch_is_an_error(dask_two):
    """A cluster whose packages differ from the client's is refused, naming the package;
    the same versions pass."""
    check_versions(dask_two.client)
    from distributed.versions import get_versions

    mine = get_versions(packages=list(CHECKED_PACKAGES))
    mine["packages"]["clamber"] = "0.0.0-other"
    with pytest.raises(ConfigError, match="clamber"):
        check_versions(dask_two.client, local=mine)


def test_dashboard_link_is_on_loopback():
    """--dashboard serves the dashboard on 127.0.0.1 and gives its link; without it the
    local cluster reports none."""
    with DaskEvaluator(n_workers=1, dashboard=True) as ev:
        assert ev.dashboard_link.startswith("http://127.0.0.1:")
        import urllib.request

        with urllib.request.urlopen(ev.dashboard_link, timeout=10) as r:
            assert r.status == 200


def test_scheduler_file_joins_a_running_cluster(dask_two, tmp_path):
    """A scheduler file (what dask-jobqueue and `dask scheduler --scheduler-file` write)
    connects to that scheduler; a missing one is a clear error, and so is asking for the
    dashboard without workers."""
    import json

    from dask import config

    path = tmp_path / "scheduler.json"
    path.write_text(json.dumps({"type": "Scheduler", "address": dask_two.address}))
    sec = dask_two.security
    tls = {"distributed.comm.tls.ca-file": sec.tls_ca_file,
           "distributed.comm.tls.client.cert": sec.tls_client_cert,
           "distributed.comm.tls.client.key": sec.tls_client_key,
           "distributed.comm.require-encryption": True}
    with config.set(tls):
        with make_evaluator(0, scheduler_file=str(path)) as ev:
            assert ev.address == dask_two.address
            assert [o.value for o in ev.map(abs, [-5])] == [5]
    with pytest.raises(ConfigError, match="does not exist"):
        make_evaluator(1, scheduler_file=str(tmp_path / "missing.json"))
    with pytest.raises(ConfigError, match="dashboard"):
        make_evaluator(0, dashboard=True)
