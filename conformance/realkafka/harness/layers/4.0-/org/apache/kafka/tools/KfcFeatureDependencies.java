package org.apache.kafka.tools;

import org.apache.kafka.server.common.Feature;

import net.sourceforge.argparse4j.inf.Namespace;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/** kafka-features feature-dependencies (4.0+; FeatureCommand.handleFeatureDependencies is package-private). */
public final class KfcFeatureDependencies {
    private KfcFeatureDependencies() { }

    /** What the command prints on stdout; a failure is thrown with those lines in `printed`. */
    public static String featureDependencies(List<String> features, List<Feature> valid, StringBuilder printed) throws Exception {
        Map<String, Object> attrs = new HashMap<>();
        attrs.put("feature", features);
        ByteArrayOutputStream buf = new ByteArrayOutputStream();
        PrintStream saved = System.out;
        System.setOut(new PrintStream(buf, true, StandardCharsets.UTF_8));
        try {
            FeatureCommand.handleFeatureDependencies(new Namespace(attrs), valid);
        } finally {
            System.setOut(saved);
            printed.append(buf.toString(StandardCharsets.UTF_8));
        }
        return buf.toString(StandardCharsets.UTF_8);
    }
}
