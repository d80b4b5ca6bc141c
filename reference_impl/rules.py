"""The rule registry: every normative rule of the reference, with a stable id and one line.

Error outcomes carry the id of the rule that produced them; tests and reports point here.
Ids never change meaning; retired rules stay listed.  KIP-915 rules live with their codec.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Rule:
    id: str
    kip: str
    area: str  # format | update | registration | api-versions | downgrade | coordinator | tools | observe
    statement: str


_RULES: list[tuple[str, str, str]] = [
    # --- KIP-584: feature levels, supported ranges, UpdateFeatures ---------------------------
    ("KIP584-UPD-01", "update", "an UpdateFeatures entry with an unknown upgrade type is rejected"),
    ("KIP584-UPD-02", "update", "a feature level cannot be less than 0"),
    ("KIP584-UPD-03", "update", "the new level must lie in the active controller's supported range"),
    ("KIP584-UPD-04", "update", "the new level must lie in the supported range of every registered broker, fenced included"),
    ("KIP584-UPD-05", "update", "a downgrade needs SAFE_DOWNGRADE or UNSAFE_DOWNGRADE"),
    ("KIP584-UPD-06", "update", "a downgrade type cannot raise a level"),
    ("KIP584-UPD-07", "update", "level 0 deletes a feature; a finalized level 0 is the same as absent"),
    ("KIP584-UPD-08", "update", "an update to the current level succeeds and still writes a record"),
    ("KIP584-UPD-09", "update", "validate_only runs every check and writes nothing"),
    ("KIP584-UPD-10", "update", "UpdateFeatures v0/v1 answer per feature; 3.x applies the features that passed"),
    ("KIP584-UPD-11", "update", "a request version the controller does not support fails with UNSUPPORTED_VERSION"),
    ("KIP584-UPD-12", "update", "UpdateFeatures sent to a controller that is not active fails with NOT_CONTROLLER"),
    ("KIP584-UPD-13", "update", "a feature the controller does not know has the supported range 0-0"),
    ("KIP584-EPOCH-01", "update", "the finalized epoch is the offset of the last applied metadata record"),
    ("KIP584-API-01", "api-versions", "ApiVersions below v3 carries no feature information"),
    ("KIP584-API-02", "api-versions", "finalized features never list a level 0"),
    ("KIP584-API-03", "api-versions", "an ApiVersions version above the node's maximum fails with UNSUPPORTED_VERSION"),
    ("KIP584-API-04", "api-versions", "a node that is not part of the cluster cannot be asked"),
    ("KIP584-API-05", "api-versions", "a controller whose metadata high watermark is not yet known answers ApiVersions with epoch -1 and, from 4.4 (KAFKA-19964), no finalized features; before 4.4 it claims the minimum metadata.version (3.3-IV3 in 4.x, 3.0-IV1 in 3.x)"),
    ("KIP584-REG-01", "registration", "a broker registers only if every finalized level lies in its supported range"),
    ("KIP584-REG-02", "registration", "a finalized feature the broker does not mention is checked against 0-0"),
    ("KIP584-REG-03", "registration", "a registration with another cluster id fails with INCONSISTENT_CLUSTER_ID"),
    ("KIP584-REG-04", "registration", "a second live registration of the same id fails with DUPLICATE_BROKER_REGISTRATION"),
    ("KIP584-REG-05", "registration", "unregistering a broker that is not registered fails with BROKER_ID_NOT_REGISTERED"),
    ("KIP584-REG-06", "registration", "a BrokerRegistration version above the controller's maximum fails with UNSUPPORTED_VERSION"),
    ("KIP584-REPLAY-01", "registration", "a controller whose software cannot replay a finalized level cannot start"),
    ("KIP584-REG-07", "registration", "without a metadata.version range (3.x) the broker is taken to support only the minimum KRaft version"),
    ("KIP584-REG-08", "registration", "from metadata.version 3.7-IV2 (directory assignment, KIP-858) a broker registration without log directories (BrokerRegistration v0-v1) fails with INVALID_REGISTRATION"),
    # Observed on a running cluster (conformance.live.checks; the observe tier)
    ("KIP584-OBS-01", "observe", "every finalized level lies in the supported range of every node"),
    ("KIP584-OBS-02", "observe", "ApiVersions sends each finalized level as min_version_level = max_version_level"),
    ("KIP584-OBS-03", "observe", "the finalized epoch never goes back, and levels hold while nothing is written"),
    ("KIP584-OBS-04", "observe", "brokers and controllers report the same finalized levels"),
    ("KIP584-OBS-05", "observe", "a node advertises its release's ApiVersions, UpdateFeatures and BrokerRegistration maxima"),
    ("KIP584-OBS-06", "observe", "what a node advertises (feature ranges, ApiVersions / UpdateFeatures / BrokerRegistration maxima) is one Apache Kafka release's"),
    ("KIP919-OBS-01", "observe", "DescribeCluster endpoint type 2 lists the controllers, never the brokers Metadata lists"),
    ("KIP482-WIRE-01", "observe", "every answer is one readable message of the version asked: no trailing bytes; tagged fields the client does not know are skipped"),
    ("KIP511-API-01", "observe", "ApiVersions is answered in the version asked (or in v0 with UNSUPPORTED_VERSION when it cannot be read)"),
    # --- KIP-778: metadata.version -----------------------------------------------------------
    ("KIP778-MV-01", "update", "an unknown metadata.version level is rejected"),
    ("KIP778-MV-02", "update", "metadata.version cannot go below the minimum (3.3-IV0 in 3.x, 3.3-IV3 in 4.x)"),
    ("KIP778-MV-03", "downgrade", "a metadata.version downgrade with no metadata change in between is allowed, SAFE or UNSAFE"),
    ("KIP778-MV-04", "downgrade", "a SAFE_DOWNGRADE of metadata.version across a metadata change is refused"),
    ("KIP778-MV-05", "downgrade", "an UNSAFE_DOWNGRADE of metadata.version across a metadata change is refused (not implemented)"),
    ("KIP778-PAY-01", "update", "a metadata record needs the metadata.version that introduced it"),
    ("KIP778-OBS-01", "observe", "a KRaft cluster finalizes metadata.version and every node advertises its range"),
    # --- KIP-919: controller registration ----------------------------------------------------
    ("KIP919-CREG-01", "registration", "controller registration needs metadata.version 3.7-IV0 or later"),
    ("KIP919-UPD-01", "update", "from 3.7-IV0 every registered controller must support the new level"),
    ("KIP919-UPD-02", "update", "from 3.7-IV0 every static voter must have registered"),
    ("KIP919-DESC-01", "registration", "DescribeCluster sent to a controller fails with UNSUPPORTED_VERSION below metadata.version 3.7-IV0 and, from 4.4 (KAFKA-19964), while the controller knows no metadata.version"),
    # --- KIP-1022: format, tools, new features, ApiVersions/BrokerRegistration v4 --------------
    ("KIP1022-FMT-01", "format", "--release-version and --feature metadata.version cannot be combined"),
    ("KIP1022-FMT-02", "format", "an unknown or malformed release version is rejected"),
    ("KIP1022-FMT-03", "format", "a --feature name the tool does not know is rejected with the supported list"),
    ("KIP1022-FMT-04", "format", "a feature level the release does not define (or not yet stable) is rejected"),
    ("KIP1022-FMT-05", "format", "feature dependencies must hold in the formatted levels"),
    ("KIP1022-FMT-06", "format", "a metadata.version below the bootstrap minimum is too old to be supported"),
    ("KIP1022-FMT-07", "format", "an unstable metadata.version needs unstable.feature.versions.enable"),
    ("KIP1022-FMT-08", "format", "kraft.version 0 cannot be set with KIP-853 (dynamic quorum) configuration"),
    ("KIP1022-FMT-09", "format", "kraft.version 1 needs KIP-853 (dynamic quorum) configuration"),
    ("KIP1022-FMT-10", "format", "features not given take their default level at the release version"),
    ("KIP1022-FMT-11", "format", "bootstrap writes metadata.version first, then non-zero features by name, never kraft.version"),
    ("KIP1022-FMT-12", "format", "a feature level that is not a number is rejected"),
    ("KIP1022-FMT-13", "format", "--standalone, --initial-controllers and --no-initial-controllers are mutually exclusive"),
    ("KIP1022-FMT-14", "format", "a release without --feature support rejects the flag"),
    ("KIP1022-FMT-15", "format", "before 3.9 a controller's configuration must name controller.quorum.voters"),
    ("KIP1022-MAP-01", "tools", "version-mapping prints the metadata.version and each production feature's default level"),
    ("KIP1022-MAP-02", "tools", "version-mapping rejects an unknown release version"),
    ("KIP1022-DEP-01", "tools", "feature-dependencies prints each level's dependencies"),
    ("KIP1022-DEP-02", "tools", "feature-dependencies rejects an unknown feature or level"),
    ("KIP1022-TOOL-02", "tools", "kafka-features --release-version cannot be combined with --feature or --metadata"),
    ("KIP1022-TOOL-03", "tools", "kafka-features rejects a repeated or malformed --feature"),
    ("KIP1022-TOOL-04", "tools", "kafka-features upgrade --release-version sends the defaults, skipping level 0"),
    ("KIP1022-TOOL-05", "tools", "kafka-features needs at least one feature"),
    ("KIP1022-TOOL-06", "tools", "kafka-features reports each failed feature and exits 1"),
    ("KIP1022-UPD-01", "update", "dependencies are checked on UpdateFeatures against the whole proposed state (4.x; 3.9 skips)"),
    ("KIP1022-UPD-02", "update", "an UpdateFeatures request is all-or-nothing and fails fast with one top-level error (4.x)"),
    ("KIP1022-UPD-03", "update", "kraft.version cannot be downgraded (4.1+)"),
    ("KIP1022-API-01", "api-versions", "ApiVersions below v4 omits supported ranges whose minimum is 0"),
    ("KIP1022-REG-01", "registration", "BrokerRegistration below v4 omits features whose minimum is 0"),
    ("KIP1022-REG-02", "registration", "a 4.x controller rejects a registration without a metadata.version range"),
    ("KIP1022-OBS-01", "observe", "a node advertises the features of its release, no more and no fewer"),
    # --- KIP-1155: metadata.version downgrade (profile kip-1155 only) -------------------------
    ("KIP1155-DG-01", "downgrade", "a metadata.version downgrade needs every registered node to support the downgrade-capable version"),
    ("KIP1155-DG-02", "downgrade", "metadata.version cannot be downgraded below 3.7-IV0"),
    ("KIP1155-DG-03", "downgrade", "the other finalized features must stay valid at the new metadata.version"),
    ("KIP1155-DG-04", "downgrade", "cleanup records come first and the metadata.version record last"),
    ("KIP1155-DG-05", "downgrade", "a snapshot is written at the new metadata.version; reloading it gives the same describe"),
    ("KIP1155-DG-06", "downgrade", "SAFE_DOWNGRADE is refused when the image holds data the target version cannot express"),
    ("KIP1155-DG-07", "downgrade", "UNSAFE_DOWNGRADE drops what the target version cannot express and reports it"),
    # --- KIP-1242: ApiVersions v5 names the cluster and node the client means -------------------
    ("KIP1242-API-01", "api-versions", "a broker answers ApiVersions v5 naming another cluster id, or its cluster id with another node id, with REBOOTSTRAP_REQUIRED (controllers do not check)"),
    # --- KIP-1312: UnregisterController (4.4+) --------------------------------------------------
    ("KIP1312-UNREG-01", "registration", "a release without UnregisterController (API key 94, before 4.4) refuses it with UNSUPPORTED_VERSION"),
    ("KIP1312-UNREG-02", "registration", "the active controller cannot unregister itself (INVALID_REQUEST)"),
    ("KIP1312-UNREG-03", "registration", "controller unregistration needs metadata.version 4.4-IV2 or later (UNSUPPORTED_VERSION)"),
    ("KIP1312-UNREG-04", "registration", "unregistering a controller that is not registered fails with CONTROLLER_ID_NOT_REGISTERED; once unregistered, its ranges no longer hold UpdateFeatures back (KIP919-UPD-01)"),
    # --- snapshots and state --------------------------------------------------------------------
    ("SNAP-01", "downgrade", "a snapshot cannot be written at a metadata.version that cannot express the image"),
    ("SNAP-02", "downgrade", "a snapshot reloads to the same describe"),
    ("CMD-01", "tools", "a command the reference cannot interpret is rejected with INVALID_COMMAND"),
]

_KIP_OF = {
    "KIP584": "KIP-584", "KIP778": "KIP-778", "KIP919": "KIP-919", "KIP1022": "KIP-1022",
    "KIP1155": "KIP-1155", "KIP915": "KIP-915", "KIP1242": "KIP-1242", "KIP1312": "KIP-1312", "KIP482": "KIP-482", "KIP511": "KIP-511",
    "SNAP": "KIP-1155", "CMD": "KIP-584",
}


def _registry() -> dict[str, Rule]:
    from .coordinator.rules import RULES as coordinator_rules  # KIP-915 rules live with the codec

    out: dict[str, Rule] = {}
    for rid, area, text in _RULES:
        out[rid] = Rule(rid, _KIP_OF[rid.split("-")[0]], area, text)
    for rid, text in coordinator_rules.items():
        out[rid] = Rule(rid, "KIP-915", "coordinator", text)
    return out


RULES: dict[str, Rule] = _registry()


def rule(rid: str) -> Rule:
    return RULES[rid]
