package org.apache.kafka.controller;

import org.apache.kafka.common.message.BrokerRegistrationRequestData;
import org.apache.kafka.common.utils.Exit;
import org.apache.kafka.metadata.BrokerRegistrationReply;

import net.sourceforge.argparse4j.inf.Namespace;

import java.io.FileOutputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;

/** 3.7: no feature versions but metadata.version; kafka-storage runs only through StorageTool.main
 *  (which ends in Exit.exit: trapped here), registerBroker takes the request version, no shutdown
 *  handler, no kraft.version (static quorums only). */
final class ShimImpl extends Shim3 {
    @Override
    List<String> productionFeatureNames() {
        return List.of();
    }

    @Override
    ClusterControlManager.Builder clusterControl(ClusterControlManager.Builder builder) {
        return builder;
    }

    /** 3.7 names it unstable.metadata.versions.enable (renamed in 3.8). */
    @Override
    String unstableFeatureVersionsConfig() {
        return kafka.server.KafkaConfig.UnstableMetadataVersionsEnableProp();
    }

    @Override
    net.sourceforge.argparse4j.inf.Namespace parseStorageArguments(String[] argv) throws Exception {
        return Until38.parseArguments(argv);
    }

    @Override
    void apiVersions(java.util.Map<String, org.apache.kafka.metadata.VersionRange> ranges, java.util.Map<String, Short> finalized,
                     long epoch, short version, com.fasterxml.jackson.databind.node.ObjectNode out) {
        Until38.apiVersions(ranges, finalized, epoch, out);
    }

    /** QuorumController.registerBroker (3.7/3.8): the finalized features, the request's version. */
    @Override
    ControllerResult<BrokerRegistrationReply> registerBroker(Cluster c, BrokerRegistrationRequestData request, int version) {
        return c.clusterControl.registerBroker(request, c.nextOffset, c.features.finalizedFeatures(Long.MAX_VALUE), (short) version);
    }

    /** StorageTool.main on the parsed arguments (all 3.7's format options) and the configuration in a file. */
    @Override
    void runFormat(Namespace ns, Properties props, PrintStream ps) throws Exception {
        Path conf = Files.createTempFile("kfc-server-", ".properties");
        try {
            try (OutputStream o = new FileOutputStream(conf.toFile())) {
                props.store(o, null);
            }
            List<String> argv = new ArrayList<>(List.of("format", "-t", ns.getString("cluster_id"), "-c", conf.toString()));
            if (ns.getString("release_version") != null) argv.addAll(List.of("--release-version", ns.getString("release_version")));
            if (Boolean.TRUE.equals(ns.getBoolean("ignore_formatted"))) argv.add("--ignore-formatted");
            List<Object> scram = ns.getList("add_scram");
            if (scram != null) scram.forEach(s -> argv.addAll(List.of("--add-scram", String.valueOf(s))));
            storageTool(argv.toArray(new String[0]), ps);
        } finally {
            Files.deleteIfExists(conf);
        }
    }

    /** No dynamic quorum before 3.9 (KIP-853): controller.quorum.voters only. */
    @Override
    boolean hasDynamicQuorum(String initialControllers, boolean noInitialControllers, boolean staticVotersEmpty) {
        return false;
    }

    /** The tool's exit, trapped: status 0 returns, another throws with the message it exits with. */
    static final class ExitTrap extends RuntimeException {
        final int status;

        ExitTrap(int status, String message) {
            super(message != null ? message : "kafka-storage exited with status " + status);
            this.status = status;
        }
    }

    @Override
    void storageTool(String[] argv, PrintStream ps) throws Exception {
        PrintStream saved = System.out;
        System.setOut(new PrintStream(ps, true, StandardCharsets.UTF_8));
        Exit.setExitProcedure((status, message) -> {
            throw new ExitTrap(status, message);
        });
        try {
            kafka.tools.StorageTool.main(argv);
        } catch (ExitTrap e) {
            if (e.status != 0) throw e;
        } finally {
            Exit.resetExitProcedure();
            System.setOut(saved);
        }
    }
}
