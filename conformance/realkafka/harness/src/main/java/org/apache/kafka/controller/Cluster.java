package org.apache.kafka.controller;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.errors.ApiException;
import org.apache.kafka.common.message.BrokerRegistrationRequestData;
import org.apache.kafka.common.message.ControllerRegistrationRequestData;
import org.apache.kafka.common.message.UpdateFeaturesRequestData;
import org.apache.kafka.common.message.UpdateFeaturesResponseData;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.metadata.ConfigRecord;
import org.apache.kafka.common.metadata.FeatureLevelRecord;
import org.apache.kafka.common.metadata.NoOpRecord;
import org.apache.kafka.common.metadata.RegisterBrokerRecord;
import org.apache.kafka.common.metadata.RegisterControllerRecord;
import org.apache.kafka.common.metadata.UnregisterBrokerRecord;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.ApiError;
import org.apache.kafka.common.requests.BrokerRegistrationRequest;
import org.apache.kafka.common.requests.UpdateFeaturesRequest;
import org.apache.kafka.common.utils.LogContext;
import org.apache.kafka.metadata.BrokerRegistration;
import org.apache.kafka.metadata.BrokerRegistrationReply;
import org.apache.kafka.metadata.FinalizedControllerFeatures;
import org.apache.kafka.metadata.VersionRange;
import org.apache.kafka.server.common.ApiMessageAndVersion;
import org.apache.kafka.server.common.MetadataVersion;
import org.apache.kafka.timeline.SnapshotRegistry;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;

/** One KRaft cluster as the active controller's managers see it (FeatureControlManager,
 *  ClusterControlManager, ConfigurationControlManager), fed the records their own results produce. */
final class Cluster {
    static final String[] CAPABILITIES = {"format", "restore_state", "version_mapping", "feature_dependencies",
        "register", "unregister", "update_features", "api_versions", "describe", "state"};
    static final int DEFAULT_CONTROLLER = 3000;
    static final String CLUSTER_ID = "kfc-cluster-0000000000";
    static final String MV = MetadataVersion.FEATURE_NAME;
    static final String KRAFT = "kraft.version";
    static final long SESSION_TIMEOUT_NS = 9_000_000_000L;

    final String ownProfile;
    String profile;
    final Shim shim = Shim.INSTANCE;
    String clusterId;
    boolean formatted;
    ManualTime time;
    SnapshotRegistry registry;
    FeatureControlManager features;
    ClusterControlManager clusterControl;
    ConfigurationControlManager configControl;
    KRaftVersionHolder kraft;
    final Map<Integer, Map<String, VersionRange>> controllers = new LinkedHashMap<>();
    List<Integer> voters = new ArrayList<>();
    int active = DEFAULT_CONTROLLER;
    boolean staticQuorum = true;
    final Map<Integer, Map<String, VersionRange>> brokers = new LinkedHashMap<>();  // brokers that have run
    final Map<Integer, String> software = new HashMap<>();  // the release a node says it runs (for messages)
    final List<ObjectNode> log = new ArrayList<>();
    long nextOffset;

    Cluster(String profile) {
        this.ownProfile = profile;
        this.profile = profile;
        reset();
    }

    void reset() {
        clusterId = CLUSTER_ID;
        formatted = false;
        controllers.clear();
        controllers.put(DEFAULT_CONTROLLER, shim.controllerRanges(false));
        voters = new ArrayList<>(List.of(DEFAULT_CONTROLLER));
        active = DEFAULT_CONTROLLER;
        staticQuorum = true;
        brokers.clear();
        software.clear();
        log.clear();
        replayed.clear();
        nextOffset = 0;
        featuresOffset = -1;
        build((short) 0);
    }

    /** Fresh managers for the active controller over the current quorum (as QuorumController builds them). */
    void build(short kraftLevel) {
        LogContext logContext = new LogContext("[kfc-harness] ");
        time = new ManualTime();
        registry = new SnapshotRegistry(logContext);
        QuorumFeatures quorumFeatures = new QuorumFeatures(active, controllers.get(active),
            staticQuorum ? voters : List.of());
        kraft = new KRaftVersionHolder(this, kraftLevel);
        ClusterFeatureSupportDescriber describer = new ClusterFeatureSupportDescriber() {
            @Override
            public Iterator<Map.Entry<Integer, Map<String, VersionRange>>> brokerSupported() {
                return clusterControl.brokerSupportedFeatures();
            }

            @Override
            public Iterator<Map.Entry<Integer, Map<String, VersionRange>>> controllerSupported() {
                return clusterControl.controllerSupportedFeatures();
            }
        };
        features = shim.featureControl(logContext, registry, quorumFeatures, describer, kraft);
        clusterControl = shim.clusterControl(new ClusterControlManager.Builder())
            .setLogContext(logContext)
            .setClusterId(clusterId)
            .setTime(time)
            .setSnapshotRegistry(registry)
            .setSessionTimeoutNs(SESSION_TIMEOUT_NS)
            .setFeatureControlManager(features)
            .build();
        clusterControl.activate();
        configControl = shim.configControl(logContext, registry, features, active);
        replication = null;
    }

    // -- plumbing -------------------------------------------------------------------------------
    long epoch() {
        return nextOffset - 1;
    }

    /** The offset a controller answers ApiVersions with: the last offset of the last batch that changed the
     *  finalized features (Kafka's FeaturesPublisher publishes only on a features delta; it needs a
     *  MetadataLoader the harness does not run, so its rule is applied here). Brokers answer epoch(). */
    long featuresOffset = -1;

    ArrayNode append(List<ApiMessageAndVersion> records) {
        ArrayNode out = KfcHarness.JSON.createArrayNode();
        for (ApiMessageAndVersion r : records) out.add(appendOne(r.message()));
        if (records.stream().anyMatch(r -> r.message() instanceof FeatureLevelRecord)) featuresOffset = epoch();
        return out;
    }

    ObjectNode appendOne(ApiMessage m) {
        long offset = nextOffset++;
        ObjectNode j = recordJson(m);
        // An amended registration (the same incarnation again) keeps its broker epoch
        // (ClusterControlManager.registerBroker): only then is the epoch not the record's own offset.
        if (m instanceof RegisterBrokerRecord && ((RegisterBrokerRecord) m).brokerEpoch() != offset) {
            j.put("epoch", ((RegisterBrokerRecord) m).brokerEpoch());
        }
        j.put("offset", offset);
        if (m instanceof FeatureLevelRecord) {
            features.replay((FeatureLevelRecord) m);
        } else if (m instanceof RegisterBrokerRecord) {
            clusterControl.replay((RegisterBrokerRecord) m, offset);
        } else if (m instanceof RegisterControllerRecord) {
            clusterControl.replay((RegisterControllerRecord) m);
        } else if (m instanceof UnregisterBrokerRecord) {
            clusterControl.replay((UnregisterBrokerRecord) m);
        } else if (shim.unregisteredController(m) >= 0) {
            shim.replayUnregisterController(this, m);
        } else if (m instanceof ConfigRecord) {
            configControl.replay((ConfigRecord) m);
        } else if (m instanceof NoOpRecord && kraft.pending >= 0) {
            j.put("kraft_version", kraft.pending);  // the raft layer's upgrade, committed with this NoOpRecord
            kraft.level = kraft.pending;
            kraft.pending = -1;
        }
        log.add(j);
        replayed.add(new Object[]{offset, m});
        return j;
    }

    /** Every record applied so far with its offset: a restarted active controller replays them. */
    final List<Object[]> replayed = new ArrayList<>();

    /** The active controller restarted (on other software): new managers load the image as a snapshot at
     *  the current offset (the latest value of each record, metadata.version first), as QuorumController
     *  does from its latest snapshot; the log before it is not replayed (a documented harness limit: Kafka
     *  may have a longer log tail after its last snapshot). */
    void restartActive() {
        long next = nextOffset;
        Map<String, Object[]> latest = new LinkedHashMap<>();
        for (Object[] r : replayed) {
            ApiMessage m = (ApiMessage) r[1];
            String key = null;
            if (m instanceof FeatureLevelRecord) key = "f:" + ((FeatureLevelRecord) m).name();
            else if (m instanceof RegisterControllerRecord) key = "c:" + ((RegisterControllerRecord) m).controllerId();
            else if (m instanceof RegisterBrokerRecord) key = "b:" + ((RegisterBrokerRecord) m).brokerId();
            else if (m instanceof ConfigRecord) key = "g:" + ((ConfigRecord) m).resourceName() + "/" + ((ConfigRecord) m).name();
            // An unregistration leaves no registration behind in the image.
            if (m instanceof UnregisterBrokerRecord) latest.remove("b:" + ((UnregisterBrokerRecord) m).brokerId());
            if (shim.unregisteredController(m) >= 0) latest.remove("c:" + shim.unregisteredController(m));
            if (key != null) {
                latest.remove(key);
                latest.put(key, r);
            }
        }
        build(kraft.level);
        List<Object[]> image = new ArrayList<>();
        Object[] mv = latest.remove("f:" + MV);
        if (mv != null) image.add(mv);
        image.addAll(latest.values());
        for (Object[] r : image) {
            long offset = (Long) r[0];
            ApiMessage m = (ApiMessage) r[1];
            if (m instanceof FeatureLevelRecord) features.replay((FeatureLevelRecord) m);
            else if (m instanceof RegisterBrokerRecord) clusterControl.replay((RegisterBrokerRecord) m, offset);
            else if (m instanceof RegisterControllerRecord) clusterControl.replay((RegisterControllerRecord) m);
            else if (m instanceof ConfigRecord) configControl.replay((ConfigRecord) m);
        }
        nextOffset = next;
    }

    static ObjectNode recordJson(ApiMessage m) {
        ObjectNode j = KfcHarness.JSON.createObjectNode();
        j.put("type", m.getClass().getSimpleName());
        if (m instanceof FeatureLevelRecord) {
            j.put("name", ((FeatureLevelRecord) m).name());
            j.put("level", ((FeatureLevelRecord) m).featureLevel());
        } else if (m instanceof RegisterBrokerRecord) {
            RegisterBrokerRecord r = (RegisterBrokerRecord) m;
            j.put("broker_id", r.brokerId());
            j.put("incarnation", GIVEN.getOrDefault(r.incarnationId(), r.incarnationId().toString()));
            // brokerEpoch: the record's own offset ("offset") unless amended, see appendOne.
            j.put("fenced", r.fenced());
            ObjectNode f = j.putObject("features");
            TreeMap<String, short[]> sorted = new TreeMap<>();
            r.features().forEach(x -> sorted.put(x.name(), new short[]{x.minSupportedVersion(), x.maxSupportedVersion()}));
            sorted.forEach((k, v) -> f.putArray(k).add(v[0]).add(v[1]));
        } else if (m instanceof RegisterControllerRecord) {
            RegisterControllerRecord r = (RegisterControllerRecord) m;
            j.put("controller_id", r.controllerId());
            j.put("incarnation", GIVEN.getOrDefault(r.incarnationId(), r.incarnationId().toString()));
            ObjectNode f = j.putObject("features");
            TreeMap<String, short[]> sorted = new TreeMap<>();
            r.features().forEach(x -> sorted.put(x.name(), new short[]{x.minSupportedVersion(), x.maxSupportedVersion()}));
            sorted.forEach((k, v) -> f.putArray(k).add(v[0]).add(v[1]));
        } else if (m instanceof UnregisterBrokerRecord) {
            j.put("broker_id", ((UnregisterBrokerRecord) m).brokerId());  // its brokerEpoch: the registration's offset
        } else if (Shim.INSTANCE.unregisteredController(m) >= 0) {
            j.put("controller_id", Shim.INSTANCE.unregisteredController(m));
        } else if (m instanceof ConfigRecord) {
            ConfigRecord r = (ConfigRecord) m;
            j.put("resource", r.resourceName().isEmpty() ? "cluster" : r.resourceName());
            j.put("name", r.name());
            j.put("value", r.value());
        }
        return j;
    }

    static ObjectNode outcome(String op) {
        ObjectNode o = KfcHarness.JSON.createObjectNode();
        o.put("op", op);
        return o;
    }

    static ObjectNode ok(ObjectNode o) {
        o.put("error", "NONE");
        o.put("error_code", 0);
        o.putNull("message");
        return o;
    }

    static ObjectNode err(ObjectNode o, Errors error, String message) {
        o.put("error", error.name());
        o.put("error_code", error.code());
        o.put("message", message);
        return o;
    }

    static ObjectNode invalid(ObjectNode o, String message) {
        o.put("error", "INVALID_COMMAND");
        o.putNull("error_code");
        o.put("message", message);
        return o;
    }

    static ObjectNode toolError(ObjectNode o, String message, List<String> lines) {
        o.put("error", "TOOL_ERROR");
        o.putNull("error_code");
        o.put("message", message);
        ArrayNode l = o.putArray("lines");
        lines.forEach(l::add);
        o.putArray("stderr").add(message);
        return o;
    }

    static ObjectNode rangesJson(Map<String, VersionRange> ranges) {
        ObjectNode j = KfcHarness.JSON.createObjectNode();
        new TreeMap<>(ranges).forEach((k, v) -> j.putArray(k).add(v.min()).add(v.max()));
        return j;
    }

    /** A node spec's ranges: explicit (the suite's translation of another release) or this release's own. */
    Map<String, VersionRange> nodeRanges(JsonNode spec, boolean controller) {
        JsonNode r = spec.get("ranges");
        if (r != null && r.isObject()) {
            Map<String, VersionRange> out = new HashMap<>();
            r.fields().forEachRemaining(e -> out.put(e.getKey(),
                VersionRange.of((short) e.getValue().get(0).asInt(), (short) e.getValue().get(1).asInt())));
            return out;
        }
        boolean unstable = spec.path("unstable").asBoolean(false);
        return controller ? shim.controllerRanges(unstable) : shim.brokerRanges(unstable);
    }

    /** The names commands gave (incarnations): records report a given incarnation by its name again. */
    static final Map<Uuid, String> GIVEN = new HashMap<>();

    static Uuid uuidOf(String text) {
        UUID u = UUID.nameUUIDFromBytes(text.getBytes(StandardCharsets.UTF_8));
        Uuid id = new Uuid(u.getMostSignificantBits(), u.getLeastSignificantBits() | 1L);
        GIVEN.put(id, text);
        return id;
    }

    ObjectNode apply(JsonNode cmd) {
        String op = cmd.path("op").asText("");
        if (List.of(CAPABILITIES).contains(op) && !shim.capabilities().contains(op)) {  // not on this release
            return invalid(outcome(op), "the kafka-jvm harness does not implement op '" + op + "' on this release");
        }
        try {
            switch (op) {
                case "format": return Tools.format(this, cmd);
                case "version_mapping": return Tools.versionMapping(this, cmd);
                case "feature_dependencies": return Tools.featureDependencies(this, cmd);
                case "restore_state": return restoreState(cmd);
                case "register": return register(cmd);
                case "unregister": return unregister(cmd);
                case "update_features": return updateFeatures(cmd);
                case "api_versions": return apiVersions(cmd, "api_versions");
                case "describe": return describe(cmd);
                case "state": return state();
                default: return invalid(outcome(op), "the kafka-jvm harness does not implement op '" + op + "'");
            }
        } catch (ApiException e) {
            return err(outcome(op), Errors.forException(e), e.getMessage());
        }
    }

    // -- restore_state: replay the records of a stated state into fresh managers ------------------
    ObjectNode restoreState(JsonNode cmd) {
        ObjectNode out = outcome("restore_state");
        List<JsonNode> specs = new ArrayList<>();
        if (cmd.path("controllers").isArray() && cmd.get("controllers").size() > 0) {
            cmd.get("controllers").forEach(specs::add);
        } else {
            specs.add(KfcHarness.JSON.createObjectNode().put("id", DEFAULT_CONTROLLER));
        }
        controllers.clear();
        for (JsonNode s : specs) controllers.put(s.get("id").asInt(), nodeRanges(s, true));
        active = cmd.has("active_controller") ? cmd.get("active_controller").asInt() : specs.get(0).get("id").asInt();
        voters = new ArrayList<>();
        if (cmd.path("voters").isArray()) cmd.get("voters").forEach(v -> voters.add(v.asInt()));
        else voters.addAll(controllers.keySet());
        short kraftLevel = (short) cmd.path("kraft_version").asInt(0);
        staticQuorum = !(cmd.has("dynamic_quorum") ? cmd.get("dynamic_quorum").asBoolean() : kraftLevel > 0);
        if (cmd.hasNonNull("cluster_id")) clusterId = cmd.get("cluster_id").asText();
        brokers.clear();
        log.clear();
        replayed.clear();
        List<ApiMessage> recs = new ArrayList<>();
        recs.add(new FeatureLevelRecord().setName(MV).setFeatureLevel((short) cmd.get("metadata_version").asInt()));
        TreeMap<String, Integer> fin = new TreeMap<>();
        if (cmd.path("finalized").isObject()) cmd.get("finalized").fields().forEachRemaining(e -> fin.put(e.getKey(), e.getValue().asInt()));
        fin.forEach((k, v) -> {
            if (v != 0) recs.add(new FeatureLevelRecord().setName(k).setFeatureLevel(v.shortValue()));
        });
        for (JsonNode s : specs) {
            if (s.path("registered").asBoolean(false)) {
                int id = s.get("id").asInt();
                recs.add(controllerRecord(id, uuidOf("restored-c" + id), controllers.get(id)));
            }
        }
        List<JsonNode> brokerSpecs = new ArrayList<>();
        if (cmd.path("brokers").isArray()) cmd.get("brokers").forEach(brokerSpecs::add);
        for (JsonNode b : brokerSpecs) {
            int id = b.get("id").asInt();
            Map<String, VersionRange> ranges = nodeRanges(b, false);
            brokers.put(id, ranges);
            RegisterBrokerRecord r = new RegisterBrokerRecord().setBrokerId(id).setIncarnationId(uuidOf("restored-" + id))
                .setFenced(b.path("fenced").asBoolean(false)).setLogDirs(List.of(uuidOf("dir-" + id)));
            new TreeMap<>(ranges).forEach((k, v) -> r.features().add(new RegisterBrokerRecord.BrokerFeature()
                .setName(k).setMinSupportedVersion(v.min()).setMaxSupportedVersion(v.max())));
            recs.add(r);
        }
        // Cluster-level configs that are set (min.insync.replicas: ConfigurationControlManager reads it).
        List<String> configs = new ArrayList<>();
        cmd.path("cluster_configs").forEach(n -> configs.add(n.asText()));
        configs.stream().sorted().forEach(n -> recs.add(new ConfigRecord().setResourceType(ConfigResource.Type.BROKER.id())
            .setResourceName("").setName(n).setValue("1")));
        if (cmd.has("end_offset")) {
            nextOffset = cmd.get("end_offset").asLong() - recs.size() + 1;
        } else {
            nextOffset = 0;
            long pad = cmd.path("epoch").asLong(0) - recs.size() + 1;
            for (long i = 0; i < pad; i++) recs.add(new NoOpRecord());
        }
        long start = nextOffset;
        build(kraftLevel);
        nextOffset = start;
        formatted = true;
        ArrayNode written = KfcHarness.JSON.createArrayNode();
        try {
            for (ApiMessage m : recs) {
                if (m instanceof RegisterBrokerRecord) ((RegisterBrokerRecord) m).setBrokerEpoch(nextOffset);
                written.add(appendOne(m));
            }
            featuresOffset = cmd.has("features_offset") && !cmd.get("features_offset").isNull()
                ? cmd.get("features_offset").asLong() : epoch();
        } catch (RuntimeException e) {
            // This release's active controller cannot replay the stated level (FeatureControlManager.replay):
            // Kafka's controller could not run in that state.
            formatted = false;
            return err(out, Errors.UNKNOWN_SERVER_ERROR, e.getMessage());
        }
        out.set("records", written);
        return ok(out);
    }

    static RegisterControllerRecord controllerRecord(int id, Uuid incarnation, Map<String, VersionRange> ranges) {
        RegisterControllerRecord r = new RegisterControllerRecord().setControllerId(id).setIncarnationId(incarnation);
        new TreeMap<>(ranges).forEach((k, v) -> r.features().add(new RegisterControllerRecord.ControllerFeature()
            .setName(k).setMinSupportedVersion(v.min()).setMaxSupportedVersion(v.max())));
        return r;
    }

    /** The cluster after a successful format: the bootstrap records replayed at offsets 0.. */
    void formatted(List<Integer> ids, List<Map<String, VersionRange>> ranges, boolean dynamic, short kraftLevel,
                   List<ApiMessageAndVersion> bootstrap, ObjectNode out) {
        controllers.clear();
        for (int i = 0; i < ids.size(); i++) controllers.put(ids.get(i), ranges.get(i));
        voters = new ArrayList<>(ids);
        active = ids.get(0);
        staticQuorum = !dynamic;
        brokers.clear();
        log.clear();
        replayed.clear();
        nextOffset = 0;
        featuresOffset = -1;
        clusterId = CLUSTER_ID;
        build(kraftLevel);
        formatted = true;
        out.set("records", append(bootstrap));
    }

    // -- register ---------------------------------------------------------------------------------
    ObjectNode register(JsonNode cmd) {
        String role = cmd.path("role").asText("broker");
        if (!formatted) {
            return invalid(outcome("register"), "register: the cluster is not formatted yet (send format or restore_state first)");
        }
        int id = cmd.get("node").asInt();
        ObjectNode out = outcome("register");
        out.put("role", role);
        out.put("node", id);
        if (role.equals("controller")) return registerController(cmd, id, out);
        if (controllers.containsKey(id)) return invalid(out, "register: node " + id + " is a controller");
        Map<String, VersionRange> ranges = nodeRanges(cmd, false);
        short vmax = ApiKeys.BROKER_REGISTRATION.latestVersion();
        int version = cmd.has("version") ? cmd.get("version").asInt() : vmax;
        out.put("version", version);
        if (version < 0 || version > vmax) {
            return err(out, Errors.UNSUPPORTED_VERSION, "BrokerRegistration version " + version + " is not supported by "
                + profile + " (0-" + vmax + ")");
        }
        String incarnation = cmd.hasNonNull("incarnation") ? cmd.get("incarnation").asText() : id + "-" + log.size();
        BrokerRegistrationRequestData data = new BrokerRegistrationRequestData()
            .setBrokerId(id)
            .setClusterId(cmd.hasNonNull("cluster_id") ? cmd.get("cluster_id").asText() : clusterId)
            .setIncarnationId(uuidOf(incarnation))
            // LogDirs is a v2+ field: a broker sending v0/v1 has none (and the controller may refuse that).
            .setLogDirs(version >= 2 ? List.of(uuidOf("dir-" + id)) : List.of())
            .setPreviousBrokerEpoch(-1L);
        data.listeners().add(new BrokerRegistrationRequestData.Listener().setName("PLAINTEXT").setHost("127.0.0.1")
            .setPort(9092).setSecurityProtocol((short) 0));
        new TreeMap<>(ranges).forEach((k, v) -> data.features().add(new BrokerRegistrationRequestData.Feature()
            .setName(k).setMinSupportedVersion(v.min()).setMaxSupportedVersion(v.max())));
        // What the broker's own request builder puts on the wire at this version (KAFKA-17492).
        BrokerRegistrationRequestData sent = new BrokerRegistrationRequest.Builder(data).build((short) version).data();
        ObjectNode sentJson = out.putObject("sent_features");
        TreeMap<String, short[]> sorted = new TreeMap<>();
        sent.features().forEach(f -> sorted.put(f.name(), new short[]{f.minSupportedVersion(), f.maxSupportedVersion()}));
        sorted.forEach((k, v) -> sentJson.putArray(k).add(v[0]).add(v[1]));
        BrokerRegistration existing = clusterControl.brokerRegistrations().get(id);
        if (existing != null && cmd.path("previous_session_alive").asBoolean(false)) {
            shim.keepSession(this, id, existing.epoch());  // its session is still alive
        } else {
            time.sleepNs(2 * SESSION_TIMEOUT_NS);  // any earlier session has expired
        }
        ControllerResult<BrokerRegistrationReply> result = shim.registerBroker(this, sent, version);
        brokers.put(id, ranges);
        software.put(id, cmd.hasNonNull("software") ? cmd.get("software").asText() : profile);
        out.set("records", append(result.records()));
        out.put("broker_epoch", clusterControl.brokerRegistrations().get(id).epoch());
        return ok(out);
    }

    /** QuorumController.registerBroker: the finalized features plus the raft layer's kraft.version. */
    FinalizedControllerFeatures registrationFeatures() {
        Map<String, Short> map = new HashMap<>(features.finalizedFeatures(Long.MAX_VALUE).featureMap());
        map.put(KRAFT, kraft.level);
        return new FinalizedControllerFeatures(map, Long.MAX_VALUE);
    }

    ObjectNode registerController(JsonNode cmd, int id, ObjectNode out) {
        Map<String, VersionRange> ranges = nodeRanges(cmd, true);
        String incarnation = cmd.hasNonNull("incarnation") ? cmd.get("incarnation").asText() : "c" + id + "-" + log.size();
        ControllerRegistrationRequestData data = new ControllerRegistrationRequestData().setControllerId(id)
            .setIncarnationId(uuidOf(incarnation)).setZkMigrationReady(false);
        new TreeMap<>(ranges).forEach((k, v) -> data.features().add(new ControllerRegistrationRequestData.Feature()
            .setName(k).setMinSupportedVersion(v.min()).setMaxSupportedVersion(v.max())));
        // A restarted controller replays the log: FeatureControlManager.replay refuses a level outside its range.
        FeatureControlManager replayer = shim.featureControl(new LogContext(), new SnapshotRegistry(new LogContext()),
            new QuorumFeatures(id, ranges, List.of(id)), null, new KRaftVersionHolder(this, kraft.level));
        try {
            Map<String, Short> fin = features.finalizedFeatures(Long.MAX_VALUE).featureMap();
            replayer.replay(new FeatureLevelRecord().setName(MV).setFeatureLevel(fin.get(MV)));  // the log's first record
            for (Map.Entry<String, Short> e : new TreeMap<>(fin).entrySet()) {
                if (!e.getKey().equals(MV)) replayer.replay(new FeatureLevelRecord().setName(e.getKey()).setFeatureLevel(e.getValue()));
            }
        } catch (RuntimeException e) {
            return err(out, Errors.UNKNOWN_SERVER_ERROR, e.getMessage());
        }
        ControllerResult<Void> result = clusterControl.registerController(data);
        if (cmd.hasNonNull("software")) software.put(id, cmd.get("software").asText());
        boolean restarted = id == active && !ranges.equals(controllers.get(id));
        controllers.put(id, ranges);
        out.set("records", append(result.records()));
        if (restarted) restartActive();
        return ok(out);
    }

    // -- unregister ---------------------------------------------------------------------------------
    /** Made on first use after each build: an unregistered broker's partitions (the harness has none) are
     *  ReplicationControlManager's, which QuorumController.unregisterBroker asks. */
    ReplicationControlManager replication;

    ObjectNode unregister(JsonNode cmd) {
        boolean controller = cmd.path("role").asText("broker").equals("controller");
        ObjectNode out = outcome("unregister");
        if (controller) out.put("role", "controller");
        int id = cmd.get("node").asInt();
        out.put("node", id);
        if (controller && !formatted) {
            return invalid(out, "unregister: the cluster is not formatted yet (send format or restore_state first)");
        }
        ControllerResult<Void> result;
        try {
            if (controller) {
                result = shim.unregisterController(this, id);
            } else {
                if (replication == null) {
                    replication = new ReplicationControlManager.Builder().setSnapshotRegistry(registry)
                        .setConfigurationControl(configControl).setClusterControl(clusterControl).setFeatureControl(features).build();
                }
                result = replication.unregisterBroker(id);
            }
        } catch (ApiException e) {
            return err(out, Errors.forException(e), controller ? e.getMessage() : shim.unregisterBrokerMessage(e));
        }
        out.set("records", append(result.records()));
        return ok(out);
    }

    // -- update_features ----------------------------------------------------------------------------
    ObjectNode updateFeatures(JsonNode cmd) {
        ObjectNode out = outcome("update_features");
        if (!formatted) return invalid(out, "update_features: the cluster is not formatted yet");
        short vmax = ApiKeys.UPDATE_FEATURES.latestVersion();
        int version = cmd.has("version") ? cmd.get("version").asInt() : vmax;
        out.put("version", version);
        out.put("epoch", featuresOffset);  // as the controller it went to reports it
        out.put("epoch_before", featuresOffset);
        // A version the receiving node does not advertise is refused before any handler sees the request
        // (the client's version negotiation), so before a standby controller's NOT_CONTROLLER.
        if (version < 0 || version > vmax) {
            return err(out, Errors.UNSUPPORTED_VERSION, "UpdateFeatures version " + version + " is not supported by "
                + profile + " (0-" + vmax + ")");
        }
        if (cmd.has("node") && controllers.containsKey(cmd.get("node").asInt()) && cmd.get("node").asInt() != active) {
            return err(out, Errors.NOT_CONTROLLER, "This is not the correct controller for this cluster.");
        }
        // ValidateOnly exists from v1 on (UpdateFeaturesRequest.json).
        UpdateFeaturesRequestData data = new UpdateFeaturesRequestData()
            .setValidateOnly(version >= 1 && cmd.path("validate_only").asBoolean(false));
        for (JsonNode u : cmd.path("updates")) {
            UpdateFeaturesRequestData.FeatureUpdateKey key = new UpdateFeaturesRequestData.FeatureUpdateKey()
                .setFeature(u.get("feature").asText())
                .setMaxVersionLevel((short) u.get("level").asInt());
            JsonNode ut = u.path("upgrade_type");
            String t = ut.asText("UPGRADE");
            byte code = ut.isInt() ? (byte) ut.asInt()  // the wire code itself
                : (byte) (t.equals("UPGRADE") ? 1 : t.equals("SAFE_DOWNGRADE") ? 2 : t.equals("UNSAFE_DOWNGRADE") ? 3 : 0);
            // v0 carries AllowDowngrade only; v1+ the UpgradeType (UpdateFeaturesRequestData's versions).
            if (version == 0) key.setAllowDowngrade(code == 2 || code == 3);
            else key.setUpgradeType(code);
            data.featureUpdates().add(key);
        }
        // The request as the controller reads it off the wire at this version.
        UpdateFeaturesRequest request = UpdateFeaturesRequest.parse(
            new UpdateFeaturesRequest(data, (short) version).serialize(), (short) version);
        long before = featuresOffset;
        UpdateFeaturesResponseData response = shim.updateFeatures(this, request.data(), version);
        boolean validateOnly = request.data().validateOnly();
        out.put("validate_only", validateOnly);
        out.set("records", pendingRecords == null ? KfcHarness.JSON.createArrayNode() : append(pendingRecords));
        pendingRecords = null;
        kraft.pending = -1;
        out.put("epoch", featuresOffset);
        out.put("epoch_before", before);
        if (response.results() != null && !response.results().isEmpty()) {
            ObjectNode results = out.putObject("results");
            response.results().forEach(r -> {
                ObjectNode x = results.putObject(r.feature());
                x.put("error", Errors.forCode(r.errorCode()).name());
                x.put("message", r.errorMessage());
            });
        }
        if (response.errorCode() != 0) return err(out, Errors.forCode(response.errorCode()), response.errorMessage());
        return ok(out);
    }

    List<ApiMessageAndVersion> pendingRecords;

    // -- api_versions / describe / state -----------------------------------------------------------------
    ObjectNode apiVersions(JsonNode cmd, String op) {
        int id = cmd.has("node") ? cmd.get("node").asInt() : active;
        ObjectNode out = outcome(op);
        out.put("node", id);
        boolean controller = controllers.containsKey(id);
        if (!controller && !clusterControl.brokerRegistrations().containsKey(id)) {
            return err(out, Errors.NETWORK_EXCEPTION, "Node " + id + " is not running in this cluster");
        }
        // A node of another release answers up to its own maximum (the target says which).
        int vmax = cmd.has("max_version") ? cmd.get("max_version").asInt() : ApiKeys.API_VERSIONS.latestVersion();
        int version = cmd.has("version") ? cmd.get("version").asInt() : vmax;
        out.put("version", version);
        if (version < 0 || version > vmax) {
            return err(out, Errors.UNSUPPORTED_VERSION, "ApiVersions version " + version + " is not supported by node "
                + id + " (" + software.getOrDefault(id, profile) + ": 0-" + vmax + ")");
        }
        Errors refused = controller ? null : shim.apiVersionsError((short) version, cmd, clusterId, id);
        if (refused != null) return err(out, refused, refused.message());
        if (version < 3) {
            out.putNull("supported");
            out.putNull("finalized");
            out.putNull("epoch");
            return ok(out);
        }
        Map<String, VersionRange> ranges = controller ? controllers.get(id) : brokers.get(id);
        Map<String, Short> finalized = new HashMap<>();
        features.finalizedFeatures(Long.MAX_VALUE).featureMap().forEach((k, v) -> {
            if (v != 0 || k.equals(MV)) finalized.put(k, v);
        });
        if (!controller || shim.controllerReportsKRaftVersion()) {
            // The raft layer's kraft.version, not a FeatureLevelRecord's (KRaftMetadataCache.features; controllers
            // from KAFKA-18920); a 3.9.0 controller reports its metadata image's features as they are.
            finalized.remove(KRAFT);
            if (kraft.level > 0) finalized.put(KRAFT, kraft.level);
        }
        shim.apiVersions(ranges, finalized, controller ? featuresOffset : epoch(), (short) version, out);
        return ok(out);
    }

    ObjectNode describe(JsonNode cmd) {
        ObjectNode out = apiVersions(cmd, "describe");
        if (!out.get("error").asText().equals("NONE") || out.get("supported").isNull()) return out;
        Map<String, short[]> supported = new HashMap<>();
        out.get("supported").fields().forEachRemaining(e ->
            supported.put(e.getKey(), new short[]{(short) e.getValue().get(0).asInt(), (short) e.getValue().get(1).asInt()}));
        Map<String, Short> finalized = new HashMap<>();
        out.get("finalized").fields().forEachRemaining(e -> finalized.put(e.getKey(), (short) e.getValue().asInt()));
        String printed;
        try {
            printed = org.apache.kafka.tools.KfcFeatureCommand.describe(supported, finalized, out.get("epoch").asLong());
        } catch (Exception e) {
            throw new IllegalStateException("kafka-features describe: " + e, e);
        }
        ArrayNode lines = out.putArray("lines");
        KfcHarness.lines(printed).forEach(lines::add);
        return out;
    }

    ObjectNode state() {
        ObjectNode out = outcome("state");
        out.put("profile", profile);
        out.put("formatted", formatted);
        ObjectNode fin = out.putObject("finalized");
        if (formatted) {
            TreeMap<String, Short> f = new TreeMap<>();
            features.finalizedFeatures(Long.MAX_VALUE).featureMap().forEach((k, v) -> {
                if (v != 0 || k.equals(MV)) f.put(k, v);
            });
            if (kraft.level > 0) f.put(KRAFT, kraft.level);
            f.forEach(fin::put);
            out.put("metadata_version", shim.metadataVersion(features).featureLevel());
        } else {
            out.put("metadata_version", 0);
        }
        out.put("kraft_version", kraft.level);
        out.put("epoch", epoch());
        ArrayNode v = out.putArray("voters");
        voters.forEach(v::add);
        out.put("active_controller", active);
        ObjectNode b = out.putObject("brokers");
        new TreeMap<>(clusterControl.brokerRegistrations()).forEach((k, r) -> b.set(String.valueOf(k), rangesJson(r.supportedFeatures())));
        ObjectNode c = out.putObject("controllers");
        TreeMap<Integer, Map<String, VersionRange>> cs = new TreeMap<>();
        if (formatted && shim.metadataVersion(features).isControllerRegistrationSupported()) {
            clusterControl.controllerSupportedFeatures().forEachRemaining(e -> cs.put(e.getKey(), e.getValue()));
        }
        cs.forEach((k, r) -> c.set(String.valueOf(k), rangesJson(r)));
        out.putArray("payload");
        return ok(out);
    }
}
