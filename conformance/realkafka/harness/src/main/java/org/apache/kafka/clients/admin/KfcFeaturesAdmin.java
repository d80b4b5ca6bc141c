package org.apache.kafka.clients.admin;

import org.apache.kafka.common.internals.KafkaFutureImpl;

import java.lang.reflect.Proxy;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;

/** An Admin whose describeFeatures answers what KafkaAdminClient builds from one ApiVersions response
 *  (finalized min = max level, an epoch below 0 as none), so that kafka-features' own handleDescribe
 *  prints it.  FeatureMetadata's and DescribeFeaturesResult's constructors are not public. */
public final class KfcFeaturesAdmin {
    private KfcFeaturesAdmin() { }

    public static Admin answering(Map<String, short[]> supported, Map<String, Short> finalized, long epoch) {
        Map<String, SupportedVersionRange> s = new HashMap<>();
        supported.forEach((k, v) -> s.put(k, new SupportedVersionRange(v[0], v[1])));
        Map<String, FinalizedVersionRange> f = new HashMap<>();
        finalized.forEach((k, v) -> f.put(k, new FinalizedVersionRange(v, v)));
        KafkaFutureImpl<FeatureMetadata> future = new KafkaFutureImpl<>();
        future.complete(new FeatureMetadata(f, epoch >= 0 ? Optional.of(epoch) : Optional.empty(), s));
        DescribeFeaturesResult result = new DescribeFeaturesResult(future);
        return (Admin) Proxy.newProxyInstance(Admin.class.getClassLoader(), new Class<?>[]{Admin.class}, (proxy, m, args) -> {
            switch (m.getName()) {
                case "describeFeatures": return result;
                case "close": return null;
                case "hashCode": return System.identityHashCode(proxy);
                case "equals": return proxy == args[0];
                case "toString": return "KfcFeaturesAdmin";
                default: throw new UnsupportedOperationException("kafka-features describe called Admin." + m.getName());
            }
        });
    }
}
