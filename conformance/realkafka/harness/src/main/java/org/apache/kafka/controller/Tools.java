package org.apache.kafka.controller;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import org.apache.kafka.metadata.VersionRange;
import org.apache.kafka.metadata.bootstrap.BootstrapMetadata;

import net.sourceforge.argparse4j.inf.ArgumentParserException;
import net.sourceforge.argparse4j.inf.Namespace;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/** kafka-storage (kafka.tools.StorageTool) run on the command's arguments: format against a scratch
 *  directory, version-mapping and feature-dependencies as the tool prints them. */
final class Tools {
    private Tools() { }

    private static List<String> featureItems(JsonNode flags) {
        List<String> items = new ArrayList<>();
        if (flags == null || flags.isNull()) return items;
        if (flags.isObject()) flags.fields().forEachRemaining(e -> items.add(e.getKey() + "=" + e.getValue().asText()));
        else if (flags.isTextual()) items.add(flags.asText());
        else flags.forEach(x -> items.add(x.asText()));
        return items;
    }

    // -- format -----------------------------------------------------------------------------------
    static ObjectNode format(Cluster c, JsonNode cmd) {
        ObjectNode out = Cluster.outcome("format");
        out.put("profile", c.profile);
        List<JsonNode> specs = new ArrayList<>();
        if (cmd.path("controllers").isArray() && cmd.get("controllers").size() > 0) cmd.get("controllers").forEach(specs::add);
        else specs.add(KfcHarness.JSON.createObjectNode().put("id", Cluster.DEFAULT_CONTROLLER));
        List<Integer> ids = new ArrayList<>();
        List<Map<String, VersionRange>> ranges = new ArrayList<>();
        for (JsonNode s : specs) {
            ids.add(s.get("id").asInt());
            // The formatted controllers run with the same unstable.feature.versions.enable as the tool.
            ObjectNode spec = s.deepCopy();
            if (!spec.has("unstable")) spec.put("unstable", cmd.path("unstable").asBoolean(false));
            ranges.add(c.nodeRanges(spec, true));
        }
        List<String> qflags = new ArrayList<>();
        for (String f : new String[]{"standalone", "initial_controllers", "no_initial_controllers"}) {
            if (cmd.path(f).asBoolean(false)) qflags.add(f);
        }
        String quorum = cmd.path("quorum").asText("");
        if (!quorum.isEmpty() && !quorum.equals("static") && !qflags.contains(quorum)) qflags.add(quorum);
        boolean staticVoters = cmd.hasNonNull("static_voters") ? cmd.get("static_voters").asBoolean() : qflags.isEmpty();
        boolean unstable = cmd.path("unstable").asBoolean(false);
        List<String> features = featureItems(cmd.get("features"));

        Path data = null;
        try {
            // The same scratch path every time (emptied after each format): the KafkaConfig naming it is reused.
            data = scratch().resolve("metadata");
            Properties props = new Properties();
            props.put("process.roles", "controller");
            props.put("node.id", String.valueOf(ids.get(0)));
            props.put("controller.listener.names", "CONTROLLER");
            props.put("listeners", "CONTROLLER://127.0.0.1:9093");
            props.put("log.dirs", data.toString());
            StringBuilder voters = new StringBuilder();
            for (int i = 0; i < ids.size(); i++) voters.append(i == 0 ? "" : ",").append(ids.get(i)).append("@127.0.0.1:").append(9093 + i);
            if (staticVoters) props.put("controller.quorum.voters", voters.toString());
            else props.put("controller.quorum.bootstrap.servers", "127.0.0.1:9093");
            if (unstable) {
                props.put(c.shim.unstableFeatureVersionsConfig(), "true");
                props.put("unstable.api.versions.enable", "true");
            }
            List<String> argv = new ArrayList<>(List.of("format", "-t", "kfc-cluster-00000000000", "-c", "server.properties"));
            if (cmd.hasNonNull("release_version")) argv.addAll(List.of("--release-version", cmd.get("release_version").asText()));
            for (String f : features) argv.addAll(List.of("--feature", f));
            for (String q : qflags) {
                if (q.equals("standalone")) argv.add("--standalone");
                else if (q.equals("no_initial_controllers")) argv.add("--no-initial-controllers");
                else {
                    StringBuilder ic = new StringBuilder();
                    for (int i = 0; i < ids.size(); i++) {
                        ic.append(i == 0 ? "" : ",").append(ids.get(i)).append("@127.0.0.1:").append(9093 + i).append(':')
                            .append(Cluster.uuidOf("dir-" + ids.get(i)));
                    }
                    argv.addAll(List.of("--initial-controllers", ic.toString()));
                }
            }
            ByteArrayOutputStream buf = new ByteArrayOutputStream();
            PrintStream ps = new PrintStream(buf, true, StandardCharsets.UTF_8);
            Namespace ns;
            try {
                ns = c.shim.parseStorageArguments(argv.toArray(new String[0]));
            } catch (Exception e) {
                if (!(e instanceof ArgumentParserException)) throw e;
                return Cluster.toolError(out, e.getMessage(), List.of());
            }
            try {
                c.shim.runFormat(ns, props, ps);
            } catch (Throwable e) {
                return Cluster.toolError(out, rootMessage(e), List.of());
            }
            BootstrapMetadata boot = c.shim.readBootstrap(data.toString());
            // kraft.version is not in the bootstrap file: Formatter.effectiveKRaftFeatureLevel's default is
            // 1 exactly when the Formatter has a dynamic quorum, which this release's Formatter tells.
            String initial = null;
            int at = argv.indexOf("--initial-controllers");
            if (at >= 0) initial = argv.get(at + 1);
            else if (qflags.contains("standalone")) initial = ids.get(0) + "@127.0.0.1:9093:" + Cluster.uuidOf("dir-" + ids.get(0));
            boolean dynamic = c.shim.hasDynamicQuorum(initial,
                qflags.contains("no_initial_controllers"), !staticVoters);
            short kraftLevel = (short) (dynamic ? 1 : 0);
            for (String f : features) {
                String[] kv = f.split("=", 2);
                if (kv.length == 2 && kv[0].trim().equals(Cluster.KRAFT)) kraftLevel = Short.parseShort(kv[1].trim());
            }
            ObjectNode mv = out.putObject("metadata_version");
            mv.put("level", boot.metadataVersion().featureLevel());
            mv.put("name", boot.metadataVersion().version());
            ObjectNode levels = out.putObject("levels");
            ArrayNode lines = out.putArray("lines");
            lines.add(Cluster.MV + "=" + boot.metadataVersion().featureLevel() + " (" + boot.metadataVersion().version() + ")");
            for (String f : c.shim.productionFeatureNames()) {
                short level = f.equals(Cluster.KRAFT) ? kraftLevel : c.shim.featureLevel(boot, f);
                levels.put(f, level);
                lines.add(f + "=" + level);
            }
            out.put("dynamic_quorum", dynamic);
            c.formatted(ids, ranges, dynamic, kraftLevel, boot.records(), out);
            return Cluster.ok(out);
        } catch (Exception e) {
            throw new IllegalStateException("format: " + e, e);
        } finally {
            deleteTree(data);
        }
    }

    private static Path scratchRoot;

    /** This JVM's own scratch directory under java.io.tmpdir (removed at exit; empty between formats). */
    static Path scratch() throws IOException {
        if (scratchRoot == null) {
            scratchRoot = Files.createTempDirectory("kfc-format-");
            scratchRoot.toFile().deleteOnExit();
        }
        return scratchRoot;
    }

    /** The exception's message; a scala.MatchError's identity hash (`[Ljava.lang.String;@1b6d3586 (of class …)`)
     *  is process noise and written "@…". */
    static String rootMessage(Throwable e) {
        String m = e.getMessage() != null ? e.getMessage() : e.toString();
        return m.replaceAll("@[0-9a-f]+ \\(of class ", "@… (of class ");
    }

    static void deleteTree(Path dir) {
        if (dir == null) return;
        try (Stream<Path> s = Files.walk(dir)) {
            s.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException ignored) {
            // a scratch directory under the temp dir
        }
    }

    // -- version-mapping / feature-dependencies --------------------------------------------------------
    /** Run kafka-storage with these arguments: its stdout lines, or a ToolFailure with the lines so far. */
    static List<String> storageTool(List<String> argv) throws ToolFailure {
        ByteArrayOutputStream buf = new ByteArrayOutputStream();
        PrintStream ps = new PrintStream(buf, true, StandardCharsets.UTF_8);
        try {
            Shim.INSTANCE.parseStorageArguments(argv.toArray(new String[0]));
        } catch (Exception e) {
            throw new ToolFailure(rootMessage(e), List.of());
        }
        try {
            Shim.INSTANCE.storageTool(argv.toArray(new String[0]), ps);
        } catch (Throwable e) {
            throw new ToolFailure(rootMessage(e), KfcHarness.lines(buf.toString(StandardCharsets.UTF_8)));
        }
        return KfcHarness.lines(buf.toString(StandardCharsets.UTF_8));
    }

    static final class ToolFailure extends Exception {
        final List<String> lines;

        ToolFailure(String message, List<String> lines) {
            super(message);
            this.lines = lines;
        }
    }

    private static final Pattern MAPPING_MV = Pattern.compile("^metadata\\.version=(\\d+) \\(.*\\)$");
    private static final Pattern LEVEL = Pattern.compile("^([^=\\s]+)=(-?\\d+)$");

    static ObjectNode versionMapping(Cluster c, JsonNode cmd) {
        ObjectNode out = Cluster.outcome("version_mapping");
        List<String> argv = new ArrayList<>(List.of("version-mapping"));
        if (cmd.hasNonNull("release_version")) argv.addAll(List.of("--release-version", cmd.get("release_version").asText()));
        List<String> lines;
        try {
            lines = storageTool(argv);
        } catch (ToolFailure e) {
            return Cluster.toolError(out, e.getMessage(), e.lines);
        }
        ObjectNode levels = KfcHarness.JSON.createObjectNode();
        for (String l : lines) {
            Matcher m = MAPPING_MV.matcher(l);
            if (m.matches()) {
                out.put("metadata_version", Integer.parseInt(m.group(1)));
                continue;
            }
            Matcher lv = LEVEL.matcher(l);
            if (lv.matches()) levels.put(lv.group(1), Integer.parseInt(lv.group(2)));
        }
        out.set("levels", levels);
        ArrayNode l = out.putArray("lines");
        lines.forEach(l::add);
        return Cluster.ok(out);
    }

    private static final Pattern DEP_HEAD = Pattern.compile("^(\\S+=-?\\d+)(?: \\(.*\\))? (has no dependencies\\.|requires:)$");
    private static final Pattern DEP_ITEM = Pattern.compile("^\\s+([^=\\s]+)=(-?\\d+)(?: \\(.*\\))?$");

    static ObjectNode featureDependencies(Cluster c, JsonNode cmd) {
        ObjectNode out = Cluster.outcome("feature_dependencies");
        List<String> argv = new ArrayList<>(List.of("feature-dependencies"));
        for (String f : featureItems(cmd.get("features"))) argv.addAll(List.of("--feature", f));
        List<String> lines;
        try {
            lines = c.shim.featureDependencies(cmd, argv);
        } catch (ToolFailure e) {
            return Cluster.toolError(out, e.getMessage(), e.lines);
        }
        Map<String, ObjectNode> deps = new LinkedHashMap<>();
        ObjectNode current = null;
        for (String l : lines) {
            Matcher h = DEP_HEAD.matcher(l);
            if (h.matches()) {
                current = KfcHarness.JSON.createObjectNode();
                deps.put(h.group(1), current);
                continue;
            }
            Matcher d = DEP_ITEM.matcher(l);
            if (d.matches() && current != null) current.put(d.group(1), Integer.parseInt(d.group(2)));
        }
        ObjectNode dj = out.putObject("dependencies");
        deps.forEach(dj::set);
        ArrayNode l = out.putArray("lines");
        lines.forEach(l::add);
        return Cluster.ok(out);
    }
}
