package org.apache.kafka.tools;

/** kafka-features' own rendering of a level (FeatureCommand.levelToString is package-private). */
public final class KfcFeatureCommand {
    private KfcFeatureCommand() { }

    /** kafka-features' own rendering of a level (a metadata.version by its name when this release knows it). */
    public static String levelToString(String feature, short level) {
        return FeatureCommand.levelToString(feature, level);
    }
}
