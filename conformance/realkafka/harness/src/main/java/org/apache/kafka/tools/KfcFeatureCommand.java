package org.apache.kafka.tools;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.KfcFeaturesAdmin;

import net.sourceforge.argparse4j.inf.Namespace;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;

/** kafka-features' own code where FeatureCommand keeps it package-private. */
public final class KfcFeatureCommand {
    private KfcFeatureCommand() { }

    /** What `kafka-features describe` prints for these ApiVersions features: FeatureCommand.handleDescribe
     *  itself, so each release's layout (tabs up to 4.2, KAFKA-19941's padded columns from 4.3.0).  It takes
     *  (Admin) up to 4.1 and (Namespace, Admin) from 4.2 (--node-id), hence the lookup by name. */
    public static String describe(Map<String, short[]> supported, Map<String, Short> finalized, long epoch) throws Exception {
        Admin admin = KfcFeaturesAdmin.answering(supported, finalized, epoch);
        Method handle = null;
        for (Method m : FeatureCommand.class.getDeclaredMethods()) {
            if (m.getName().equals("handleDescribe")) handle = m;
        }
        if (handle == null) throw new IllegalStateException("FeatureCommand.handleDescribe not found");
        handle.setAccessible(true);
        Object[] args = handle.getParameterCount() == 1 ? new Object[]{admin}
            : new Object[]{new Namespace(new HashMap<>()), admin};
        ByteArrayOutputStream buf = new ByteArrayOutputStream();
        PrintStream saved = System.out;
        System.setOut(new PrintStream(buf, true, StandardCharsets.UTF_8));
        try {
            handle.invoke(null, args);
        } catch (InvocationTargetException e) {
            throw e.getCause() instanceof Exception ? (Exception) e.getCause() : e;
        } finally {
            System.setOut(saved);
        }
        return buf.toString(StandardCharsets.UTF_8);
    }
}
