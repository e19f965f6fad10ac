from __future__ import annotations

from pathlib import Path

import redis

from opsboard.embedded.redis import EmbeddedRedis


def test_embedded_redis_serves_and_keeps_data_across_a_restart(tmp_path: Path) -> None:
    server = EmbeddedRedis(tmp_path).start()
    port = server.port
    redis.Redis.from_url(server.url).set("survives", "yes")
    server.stop()
    assert not (tmp_path / "url").exists()

    again = EmbeddedRedis(tmp_path, port=port).start()
    try:
        assert redis.Redis.from_url(again.url).get("survives") == b"yes"
        assert (tmp_path / "url").read_text() == again.url
        # redis 6 writes appendonly.aof, redis 7 an appendonlydir/ of them.
        assert (tmp_path / "appendonly.aof").exists() or (tmp_path / "appendonlydir").is_dir()
    finally:
        again.stop()


def test_redis_server_fixture_answers(redis_url: str) -> None:
    client = redis.Redis.from_url(redis_url)
    assert client.ping()
    assert client.config_get("bind")["bind"] == "127.0.0.1"
