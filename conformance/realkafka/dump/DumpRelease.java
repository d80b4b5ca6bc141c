// Prints one Kafka release's feature-versioning tables as JSON, read from the release's own classes
// (the jars on the classpath): MetadataVersion, the Feature enum (Features on 3.8/3.9), QuorumFeatures
// and BrokerFeatures. The output is the dump format of fixtures/release-dumps (Python's
// json.dumps(indent=1) layout). Reflection covers the API differences between 3.7 and 4.4; nothing
// here restates a Kafka table. Run by conformance/realkafka/dump.py (scripts/dump_release.py).

import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

public final class DumpRelease {
    private static final String COMMON = "org.apache.kafka.server.common.";
    // MetadataVersion's boolean gates kept in the dump, in the dump's key order (absent ones skipped)
    private static final String[][] GATES = {
        {"is_kraft_supported", "isKRaftSupported"},
        {"is_controller_registration_supported", "isControllerRegistrationSupported"},
        {"is_migration_supported", "isMigrationSupported"},
        {"is_elr_supported", "isElrSupported"},
        {"is_scram_supported", "isScramSupported"},
    };

    public static void main(String[] args) throws Exception {
        String version = args.length > 0 ? args[0] : "?";
        Class<?> mvClass = Class.forName(COMMON + "MetadataVersion");
        Object[] mvs = mvClass.getEnumConstants();
        Map<String, Object> dump = new LinkedHashMap<>();
        dump.put("metadata_version", metadataVersion(mvClass, mvs));
        Class<?> featureEnum = featureEnum();
        if (featureEnum == null) {
            dump.put("features", new ArrayList<>());
            dump.put("features_note", "kafka-" + version
                    + ": no Features/FeatureVersion enum in this release; metadata.version is the only feature");
            dump.put("PRODUCTION_FEATURE_NAMES", new ArrayList<>());
        } else {
            dump.put("features", features(featureEnum, mvs));
            dump.put("PRODUCTION_FEATURE_NAMES", productionNames(featureEnum));
        }
        dump.put("default_supported_features", supported());
        StringBuilder out = new StringBuilder();
        write(out, dump, 0);
        System.out.println(out);
    }

    // -- metadata.version -----------------------------------------------------------------------

    private static Map<String, Object> metadataVersion(Class<?> mvClass, Object[] mvs) throws Exception {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("feature_name", staticField(mvClass, "FEATURE_NAME"));
        Object minimum = staticField(mvClass, "MINIMUM_VERSION");  // 4.x; 3.x has MINIMUM_KRAFT_VERSION
        if (minimum != null) {
            m.put("MINIMUM_VERSION", ref(minimum));
        }
        Object kraft = staticField(mvClass, "MINIMUM_KRAFT_VERSION");
        m.put("MINIMUM_KRAFT_VERSION", ref(kraft != null ? kraft : minimum));
        Object boot = staticField(mvClass, "MINIMUM_BOOTSTRAP_VERSION");
        m.put("MINIMUM_BOOTSTRAP_VERSION", ref(boot != null ? boot : minimum));  // 4.x: gone, = MINIMUM_VERSION
        m.put("LATEST_PRODUCTION", ref(staticField(mvClass, "LATEST_PRODUCTION")));
        m.put("latest_testing", ref(mvClass.getMethod("latestTesting").invoke(null)));
        List<Object> versions = new ArrayList<>();
        for (Object mv : mvs) {
            Map<String, Object> v = new LinkedHashMap<>();
            v.put("enum", ((Enum<?>) mv).name());
            v.put("feature_level", level(mv));
            v.put("version", call(mv, "version"));
            v.put("release", call(mv, "shortVersion"));
            v.put("did_metadata_change", call(mv, "didMetadataChange"));
            v.put("is_production", call(mv, "isProduction"));
            for (String[] gate : GATES) {
                Method g = method(mv.getClass(), gate[1]);
                if (g != null) {
                    v.put(gate[0], g.invoke(mv));
                }
            }
            versions.add(v);
        }
        m.put("versions", versions);
        return m;
    }

    private static Map<String, Object> ref(Object mv) throws Exception {
        Map<String, Object> r = new LinkedHashMap<>();
        r.put("enum", ((Enum<?>) mv).name());
        r.put("feature_level", level(mv));
        r.put("version", call(mv, "version"));
        return r;
    }

    private static int level(Object mv) throws Exception {
        return ((Number) call(mv, "featureLevel")).intValue();
    }

    // -- features -----------------------------------------------------------------------------------

    /** The feature enum: Feature (4.x), Features (3.8/3.9); 3.7's Features is a class, not an enum. */
    private static Class<?> featureEnum() {
        for (String name : new String[] {"Feature", "Features"}) {
            try {
                Class<?> c = Class.forName(COMMON + name);
                if (c.isEnum()) {
                    return c;
                }
            } catch (ClassNotFoundException e) {
                // not in this release
            }
        }
        return null;
    }

    private static List<Object> features(Class<?> featureEnum, Object[] mvs) throws Exception {
        List<?> production = (List<?>) staticField(featureEnum, "PRODUCTION_FEATURES");
        Method defaultLevel = method(featureEnum, "defaultLevel", 1);  // 4.x; 3.x: defaultValue
        if (defaultLevel == null) {
            defaultLevel = method(featureEnum, "defaultValue", 1);
        }
        List<Object> out = new ArrayList<>();
        for (Object f : featureEnum.getEnumConstants()) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("name", call(f, "featureName"));
            m.put("enum", ((Enum<?>) f).name());
            m.put("in_production_features", production.contains(f));
            if (method(featureEnum, "minimumProduction") != null) {
                m.put("minimum_production", num(call(f, "minimumProduction")));
            }
            m.put("latest_production", num(call(f, "latestProduction")));
            m.put("latest_testing", num(call(f, "latestTesting")));
            if (method(featureEnum, "supportedVersionRange") != null) {
                Object range = call(f, "supportedVersionRange");
                m.put("supported_version_range", List.of(num(call(range, "min")), num(call(range, "max"))));
            }
            List<Object> levels = new ArrayList<>();
            for (Object fv : (Object[]) call(f, "featureVersions")) {
                Map<String, Object> lv = new LinkedHashMap<>();
                lv.put("enum", ((Enum<?>) fv).name());
                lv.put("level", num(call(fv, "featureLevel")));
                lv.put("bootstrap_metadata_version", ref(call(fv, "bootstrapMetadataVersion")));
                Map<String, Object> deps = new TreeMap<>();
                for (Map.Entry<?, ?> e : ((Map<?, ?>) call(fv, "dependencies")).entrySet()) {
                    deps.put((String) e.getKey(), num(e.getValue()));
                }
                lv.put("dependencies", deps);
                levels.add(lv);
            }
            m.put("levels", levels);
            Map<String, Object> byMv = new LinkedHashMap<>();
            for (Object mv : mvs) {
                if (level(mv) >= 1) {  // KRaft metadata.versions only: defaultValue has no meaning below 3.0-IV1
                    byMv.put((String) call(mv, "version"), num(defaultLevel.invoke(f, mv)));
                }
            }
            m.put("default_level_by_metadata_version", byMv);
            out.add(m);
        }
        return out;
    }

    private static List<Object> productionNames(Class<?> featureEnum) throws Exception {
        Object names = staticField(featureEnum, "PRODUCTION_FEATURE_NAMES");
        List<Object> out = new ArrayList<>();
        if (names != null) {
            out.addAll((List<?>) names);
        } else {
            for (Object f : (List<?>) staticField(featureEnum, "PRODUCTION_FEATURES")) {
                out.add(call(f, "featureName"));
            }
        }
        return out;
    }

    // -- the ranges a controller and a broker advertise by default ------------------------------

    private static Map<String, Object> supported() throws Exception {
        Class<?> quorum = Class.forName("org.apache.kafka.controller.QuorumFeatures");
        Method controller = method(quorum, "defaultSupportedFeatureMap", 1);  // 4.x; 3.x: defaultFeatureMap
        if (controller == null) {
            controller = method(quorum, "defaultFeatureMap", 1);
        }
        Class<?> broker;
        try {
            broker = Class.forName("org.apache.kafka.server.BrokerFeatures");  // 4.1+ (Java)
        } catch (ClassNotFoundException e) {
            broker = Class.forName("kafka.server.BrokerFeatures");  // Scala: static forwarders of the companion
        }
        Method brokerDefault = broker.getMethod("defaultSupportedFeatures", boolean.class);
        Map<String, Object> out = new LinkedHashMap<>();
        for (boolean unstable : new boolean[] {false, true}) {
            out.put("controller_" + kind(unstable), ranges((Map<?, ?>) controller.invoke(null, unstable)));
        }
        for (boolean unstable : new boolean[] {false, true}) {
            Object features = brokerDefault.invoke(null, unstable);
            out.put("broker_" + kind(unstable), ranges((Map<?, ?>) call(features, "features")));
        }
        return out;
    }

    private static String kind(boolean unstable) {
        return unstable ? "unstable" : "production";
    }

    private static Map<String, Object> ranges(Map<?, ?> byName) throws Exception {
        Map<String, Object> out = new TreeMap<>();
        for (Map.Entry<?, ?> e : byName.entrySet()) {
            Object r = e.getValue();
            out.put((String) e.getKey(), List.of(num(call(r, "min")), num(call(r, "max"))));
        }
        return out;
    }

    // -- reflection ---------------------------------------------------------------------------------

    private static Method method(Class<?> c, String name) {
        return method(c, name, 0);
    }

    private static Method method(Class<?> c, String name, int parameters) {
        for (Method m : c.getMethods()) {
            if (m.getName().equals(name) && m.getParameterCount() == parameters) {
                return m;
            }
        }
        return null;
    }

    private static Object call(Object target, String name) throws Exception {
        Method m = method(target.getClass(), name);
        if (m == null) {  // enum constants with bodies are subclasses: look on the declaring enum
            m = target.getClass().getSuperclass().getMethod(name);
        }
        m.setAccessible(true);
        return m.invoke(target);
    }

    private static Object staticField(Class<?> c, String name) throws Exception {
        try {
            Field f = c.getField(name);
            return f.get(null);
        } catch (NoSuchFieldException e) {
            return null;
        }
    }

    private static int num(Object n) {
        return ((Number) n).intValue();
    }

    // -- JSON in Python's json.dumps(indent=1) layout -----------------------------------------------

    private static void write(StringBuilder out, Object value, int depth) {
        if (value instanceof Map<?, ?> map) {
            if (map.isEmpty()) {
                out.append("{}");
                return;
            }
            out.append("{");
            String sep = "\n";
            for (Map.Entry<?, ?> e : map.entrySet()) {
                out.append(sep).append(" ".repeat(depth + 1));
                string(out, (String) e.getKey());
                out.append(": ");
                write(out, e.getValue(), depth + 1);
                sep = ",\n";
            }
            out.append("\n").append(" ".repeat(depth)).append("}");
        } else if (value instanceof List<?> list) {
            if (list.isEmpty()) {
                out.append("[]");
                return;
            }
            out.append("[");
            String sep = "\n";
            for (Object item : list) {
                out.append(sep).append(" ".repeat(depth + 1));
                write(out, item, depth + 1);
                sep = ",\n";
            }
            out.append("\n").append(" ".repeat(depth)).append("]");
        } else if (value instanceof String s) {
            string(out, s);
        } else if (value == null) {
            out.append("null");
        } else {
            out.append(value);  // Boolean, Integer
        }
    }

    private static void string(StringBuilder out, String s) {
        out.append('"');
        for (char c : s.toCharArray()) {
            switch (c) {
                case '"' -> out.append("\\\"");
                case '\\' -> out.append("\\\\");
                case '\n' -> out.append("\\n");
                default -> {
                    if (c < 0x20 || c > 0x7e) {
                        out.append(String.format("\\u%04x", (int) c));
                    } else {
                        out.append(c);
                    }
                }
            }
        }
        out.append('"');
    }
}
