package org.apache.kafka.controller;

import com.fasterxml.jackson.databind.node.ObjectNode;

import org.apache.kafka.common.message.BrokerRegistrationRequestData;
import org.apache.kafka.metadata.BrokerRegistrationReply;
import org.apache.kafka.metadata.VersionRange;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/** 3.9: ApiVersions v4 (alterFeatureLevel0), the Java Formatter (kafka-storage format --feature, --standalone, --initial-controllers),
 *  registerBroker without the request version, the BrokerUncleanShutdownHandler. */
final class ShimImpl extends Shim3 {
    @Override
    List<String> productionFeatureNames() {
        List<String> out = new ArrayList<>();
        org.apache.kafka.server.common.Features.PRODUCTION_FEATURES.forEach(f -> out.add(f.featureName()));
        return out;
    }

    @Override
    ClusterControlManager.Builder clusterControl(ClusterControlManager.Builder builder) {
        return builder.setBrokerUncleanShutdownHandler((id, records) -> { });
    }

    /** 3.9.0's ControllerServer hands SimpleApiVersionManager featuresPublisher.features() as they are; 3.9.1
     *  sets the raft client's kraftVersion on them (ControllerServer.startup's provider, KAFKA-18920: the
     *  class bytes of the two jars differ by that call). */
    @Override
    boolean controllerReportsKRaftVersion() {
        return !org.apache.kafka.common.utils.AppInfoParser.getVersion().equals("3.9.0");
    }

    @Override
    void apiVersions(Map<String, VersionRange> ranges, Map<String, Short> finalized, long epoch, short version, ObjectNode out) {
        Since39.apiVersions(ranges, finalized, epoch, version, out);
    }

    @Override
    ControllerResult<BrokerRegistrationReply> registerBroker(Cluster c, BrokerRegistrationRequestData request, int version) {
        return c.clusterControl.registerBroker(request, c.nextOffset, c.registrationFeatures());
    }

    @Override
    void runFormat(net.sourceforge.argparse4j.inf.Namespace ns, java.util.Properties props, java.io.PrintStream ps) throws Exception {
        Since39.runFormat(ns, props, ps);
    }

    @Override
    boolean hasDynamicQuorum(String initialControllers, boolean noInitialControllers, boolean staticVotersEmpty)
        throws ReflectiveOperationException {
        return Since39.hasDynamicQuorum(initialControllers, noInitialControllers, staticVotersEmpty);
    }

    @Override
    void storageTool(String[] argv, java.io.PrintStream ps) throws Exception {
        Since39.storageTool(argv, ps);
    }
}
