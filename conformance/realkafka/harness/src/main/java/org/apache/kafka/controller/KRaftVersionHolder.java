package org.apache.kafka.controller;

/** The raft layer's kraft.version as the controller sees it (4.1+: through KRaftVersionAccessor, the
 *  4.1 shim's KRaftAccessor; 4.0 writes a FeatureLevelRecord that replay skips, KAFKA-18979).  There
 *  is no raft client here: an upgrade is checked against the voters' kraft.version ranges with the
 *  checks and messages of LeaderState.maybeAppendUpgradedKRaftVersion, and commits with the
 *  NoOpRecord FeatureControlManager writes for it (a documented harness limit). */
final class KRaftVersionHolder {
    final Cluster cluster;
    short level;
    short pending = -1;

    KRaftVersionHolder(Cluster cluster, short level) {
        this.cluster = cluster;
        this.level = level;
    }
}
