"""KIP-1242 (Kafka 4.4.0): ApiVersions v5 carries the cluster id and node id the client means; a broker
that is not that node of that cluster answers REBOOTSTRAP_REQUIRED (KafkaApis.clusterIdOrNodeIdIsInvalid
in the 4.4.0 jar); controllers do not check.  The wire codec speaks v5 through conformance/wire/kio_ext."""

from __future__ import annotations

import io

import pytest
from kio.serial import entity_writer

from conformance.wire import codec
from reference_impl import Cluster


@pytest.fixture
def cluster() -> Cluster:
    c = Cluster("kafka-4.4")
    c.apply({"op": "format"})
    assert c.apply({"op": "register", "node": 1})["error"] == "NONE"
    return c


def av(c: Cluster, **kw: object) -> dict:
    return c.apply({"op": "api_versions", "version": 5, **kw})


@pytest.mark.rule("KIP1242-API-01", "fail")
def test_a_broker_refuses_another_cluster_or_node(cluster: Cluster) -> None:
    out = av(cluster, node=1, cluster_id="another")
    assert (out["error"], out["error_code"], out["rule"]) == ("REBOOTSTRAP_REQUIRED", 129, "KIP1242-API-01")
    assert av(cluster, node=1, cluster_id=cluster.cluster_id, node_id=2)["error"] == "REBOOTSTRAP_REQUIRED"


@pytest.mark.rule("KIP1242-API-01", "pass")
def test_the_ids_are_checked_only_when_a_cluster_id_is_sent(cluster: Cluster) -> None:
    assert av(cluster, node=1, cluster_id=cluster.cluster_id, node_id=1)["error"] == "NONE"
    assert av(cluster, node=1, node_id=7)["error"] == "NONE"  # no cluster id: the node id is not looked at
    assert av(cluster, node=1)["finalized"] == av(cluster, node=1, version=4)["finalized"]


@pytest.mark.rule("KIP1242-API-01", "pass")
def test_controllers_do_not_check(cluster: Cluster) -> None:
    assert av(cluster, cluster_id="another", node_id=99)["error"] == "NONE"


def test_v5_is_kafka_4_4_and_later() -> None:
    c = Cluster("kafka-4.3")
    c.apply({"op": "format"})
    assert av(c)["error"] == "UNSUPPORTED_VERSION"


def test_the_codec_writes_v5_as_kafkas_json_defines_it() -> None:
    # ClientSoftwareName, ClientSoftwareVersion (compact strings), ClusterId (compact nullable string),
    # NodeId (int32), then the empty tagged-field section (ApiVersionsRequest.json, 4.4.0).
    schema = codec.request_schema(codec.API_VERSIONS, 5)
    buf = io.BytesIO()
    entity_writer(schema)(buf, schema(client_software_name="kfc", client_software_version="1",
                                       cluster_id="abc", node_id=3))
    assert buf.getvalue().hex() == "046b6663" "0231" "04616263" "00000003" "00"
    buf = io.BytesIO()
    entity_writer(schema)(buf, schema(client_software_name="kfc", client_software_version="1"))
    assert buf.getvalue().hex() == "046b6663" "0231" "00" "ffffffff" "00"  # null cluster id, node -1
    assert codec.response_schema(codec.API_VERSIONS, 5).__version__ == 5
