package org.apache.kafka.controller;

import com.fasterxml.jackson.databind.node.ObjectNode;

import org.apache.kafka.common.feature.Features;
import org.apache.kafka.common.feature.SupportedVersionRange;
import org.apache.kafka.common.message.ApiVersionsResponseData;
import org.apache.kafka.common.requests.ApiVersionsResponse;
import org.apache.kafka.metadata.VersionRange;

import net.sourceforge.argparse4j.inf.ArgumentParserException;
import net.sourceforge.argparse4j.inf.Namespace;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.security.Permission;
import java.util.HashMap;
import java.util.Map;

/** Calls 3.7 and 3.8 share (their shims delegate to them). */
final class Until38 {
    private Until38() { }

    /** The exit of a tool that ends the process (argparse4j's parseArgsOrFail, Kafka's Exit), trapped. */
    static final class ExitTrap extends SecurityException {
        final int status;

        ExitTrap(int status) {
            super("exit " + status);
            this.status = status;
        }
    }

    /** StorageTool.parseArguments, whose parseArgsOrFail prints usage and "kafka-storage: error: MESSAGE" and
     *  calls System.exit(1) on a refusal (3.7/3.8): the exit is trapped and the refusal is an
     *  ArgumentParserException with argparse4j's message, as 3.9+'s parseArgs throws it. */
    static Namespace parseArguments(String[] argv) throws ArgumentParserException {
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        PrintStream saved = System.err;
        SecurityManager before = System.getSecurityManager();
        System.setErr(new PrintStream(err, true, StandardCharsets.UTF_8));
        System.setSecurityManager(new SecurityManager() {
            @Override
            public void checkExit(int status) {
                throw new ExitTrap(status);
            }

            @Override
            public void checkPermission(Permission perm) { }

            @Override
            public void checkPermission(Permission perm, Object context) { }
        });
        try {
            return kafka.tools.StorageTool.parseArguments(argv);
        } catch (ExitTrap e) {
            String message = "kafka-storage exited with status " + e.status;
            for (String line : err.toString(StandardCharsets.UTF_8).split("\\R")) {
                if (line.startsWith(ERROR)) message = line.substring(ERROR.length());
            }
            throw new ArgumentParserException(message, null);
        } finally {
            System.setSecurityManager(before);
            System.setErr(saved);
        }
    }

    private static final String ERROR = "kafka-storage: error: ";

    /** ApiVersionsResponse.createApiVersionsResponse as the 3.7/3.8 ApiVersionManagers call it (no v4). */
    static void apiVersions(Map<String, VersionRange> ranges, Map<String, Short> finalized, long epoch, ObjectNode out) {
        Map<String, SupportedVersionRange> supported = new HashMap<>();
        ranges.forEach((k, v) -> supported.put(k, new SupportedVersionRange(v.min(), v.max())));
        ApiVersionsResponseData data = ApiVersionsResponse.createApiVersionsResponse(0,
            new ApiVersionsResponseData.ApiVersionCollection(), Features.supportedFeatures(supported), finalized, epoch,
            false).data();
        Shim.writeApiVersions(data, out);
    }
}
