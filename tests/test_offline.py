"""Ingest and ask with every non-loopback connection refused at the socket level."""

from __future__ import annotations

import ipaddress
import socket

import pytest
from conftest import BATTERY_Q, fresh_settings

from ingestion.pipeline import ingest
from rag import models
from rag.pipeline import RagPipeline


def _loopback(host) -> bool:
    if host in ("localhost", "", None):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@pytest.fixture
def no_network(monkeypatch):
    attempts: list = []
    real_connect, real_connect_ex, real_getaddrinfo = socket.socket.connect, socket.socket.connect_ex, socket.getaddrinfo

    def guard(address):
        if isinstance(address, tuple) and not _loopback(address[0]):
            attempts.append(address)
            raise ConnectionRefusedError(f"test forbids connecting to {address}")

    def connect(self, address):
        guard(address)
        return real_connect(self, address)

    def connect_ex(self, address):
        guard(address)
        return real_connect_ex(self, address)

    def getaddrinfo(host, *args, **kwargs):
        guard((host, 0))
        return real_getaddrinfo(host, *args, **kwargs)

    monkeypatch.setattr(socket.socket, "connect", connect)
    monkeypatch.setattr(socket.socket, "connect_ex", connect_ex)
    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    return attempts


def test_ingest_and_ask_attempt_no_outside_connection(base_settings, corpus, tmp_path, no_network):
    # Load the models afresh under the guard, as a new process would.
    models._embedding.cache_clear()
    models._llamacpp.cache_clear()
    settings = fresh_settings(base_settings, tmp_path / "storage")
    assert ingest([corpus], settings, progress=False).indexed == 2
    answer = RagPipeline(settings).answer(BATTERY_Q)
    assert answer.answerable and answer.sources[0]["doc"] == "battery.md"
    assert no_network == []
