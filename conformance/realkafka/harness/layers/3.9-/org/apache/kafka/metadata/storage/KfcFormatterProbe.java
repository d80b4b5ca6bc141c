package org.apache.kafka.metadata.storage;

import org.apache.kafka.raft.DynamicVoters;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;

/** Formatter.hasDynamicQuorum() (package-private) for the quorum StorageTool described to it: 4.0.0
 *  decides by the flags (setNoInitialControllersFlag), 4.0.2 and later by an empty
 *  controller.quorum.voters (setHasDynamicQuorum).  Whichever setter this release's Formatter has
 *  is called, as its StorageTool calls it. */
public final class KfcFormatterProbe {
    private KfcFormatterProbe() { }

    public static boolean hasDynamicQuorum(String initialControllers, boolean noInitialControllers,
                                           boolean staticVotersEmpty) throws ReflectiveOperationException {
        Formatter f = new Formatter();
        if (initialControllers != null) f.setInitialControllers(DynamicVoters.parse(initialControllers));
        call(f, "setHasDynamicQuorum", staticVotersEmpty);
        call(f, "setNoInitialControllersFlag", noInitialControllers);
        return f.hasDynamicQuorum();
    }

    private static void call(Formatter f, String name, boolean value) throws ReflectiveOperationException {
        Method m;
        try {
            m = Formatter.class.getMethod(name, boolean.class);
        } catch (NoSuchMethodException e) {
            return;  // not in this release
        }
        try {
            m.invoke(f, value);
        } catch (InvocationTargetException e) {
            throw e;
        }
    }
}
