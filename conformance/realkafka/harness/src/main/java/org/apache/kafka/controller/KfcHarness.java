/*
 * The kfc target protocol (docs/target-protocol.md) in front of Apache Kafka's own controller classes.
 *
 * It lives in Kafka's package because FeatureControlManager's and ClusterControlManager's builders and
 * their updateFeatures/registerBroker are package-private.  Every answer comes from Kafka's classes;
 * this file only turns commands into Kafka requests and Kafka results into outcomes.  What differs
 * between releases sits behind Shim (one small class per release line, chosen at build time).
 */
package org.apache.kafka.controller;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.NullNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

public final class KfcHarness {
    static final ObjectMapper JSON = new ObjectMapper();

    private KfcHarness() { }

    public static void main(String[] args) throws Exception {
        // Kafka logs through slf4j; stdout carries protocol lines only.
        PrintStream out = new PrintStream(new java.io.FileOutputStream(java.io.FileDescriptor.out), false, StandardCharsets.UTF_8);
        System.setOut(System.err);
        // The scratch directory kafka-storage format writes under (java.io.tmpdir, in memory when the caller could).
        Files.createDirectories(Path.of(System.getProperty("java.io.tmpdir")));
        String profile = args.length > 0 ? args[0] : null;
        String name = args.length > 1 ? args[1] : "kafka-jvm";
        Cluster cluster = new Cluster(profile);
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            if (line.isBlank()) continue;
            ObjectNode reply;
            JsonNode req = null;
            try {
                req = JSON.readTree(line);
                reply = handle(cluster, req, profile, name);
            } catch (Throwable e) {
                reply = JSON.createObjectNode();
                JsonNode id = req != null && req.has("id") && req.get("id").isInt() ? req.get("id") : NullNode.getInstance();
                reply.set("id", id);
                reply.put("type", "error");
                reply.put("message", "harness failed: " + e);
                e.printStackTrace(System.err);
            }
            out.println(JSON.writeValueAsString(reply));
            out.flush();
        }
    }

    static ObjectNode handle(Cluster cluster, JsonNode req, String profile, String name) {
        ObjectNode reply = JSON.createObjectNode();
        if (req == null || !req.isObject() || !req.has("id") || !req.get("id").isInt()) {
            reply.putNull("id");
            reply.put("type", "error");
            reply.put("message", "request is not an object with an integer id");
            return reply;
        }
        reply.set("id", req.get("id"));
        String type = req.path("type").asText("");
        switch (type) {
            case "hello": {
                reply.put("type", "hello");
                reply.put("protocol_version", 1);
                reply.put("name", name);
                reply.put("profile", profile);
                ArrayNode caps = reply.putArray("capabilities");
                for (String op : cluster.shim.capabilities()) caps.add(op);
                reply.putArray("extensions").add("apply_batch");
                return reply;
            }
            case "reset":
                // The suite names the profile it wants; the caller only asks for this release's own profiles.
                JsonNode want = req.get("profile");
                cluster.profile = want != null && want.isTextual() ? want.asText() : cluster.ownProfile;
                cluster.reset();
                reply.put("type", "reset");
                reply.put("profile", cluster.profile);
                return reply;
            case "apply": {
                reply.put("type", "outcome");
                reply.set("outcome", cluster.apply(req.path("command")));
                return reply;
            }
            case "apply_batch": {
                // A whole trace in one round trip: each command exactly as an apply of its own.
                JsonNode commands = req.path("commands");
                if (!commands.isArray()) {
                    reply.put("type", "error");
                    reply.put("message", "apply_batch needs a 'commands' array");
                    return reply;
                }
                reply.put("type", "outcomes");
                ArrayNode outcomes = reply.putArray("outcomes");
                for (JsonNode command : commands) outcomes.add(cluster.apply(command));
                return reply;
            }
            default:
                reply.put("type", "error");
                reply.put("message", "unknown request type '" + type + "'; expected one of hello, reset, apply, apply_batch");
                return reply;
        }
    }

    static List<String> lines(String text) {
        List<String> out = new ArrayList<>();
        for (String l : text.split("\\R")) if (!l.isEmpty()) out.add(l);
        return out;
    }
}
