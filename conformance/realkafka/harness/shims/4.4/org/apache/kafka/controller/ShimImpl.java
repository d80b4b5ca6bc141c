package org.apache.kafka.controller;

import com.fasterxml.jackson.databind.JsonNode;

import org.apache.kafka.clients.admin.FeatureUpdate;
import org.apache.kafka.common.errors.ApiException;
import org.apache.kafka.common.errors.InvalidRequestException;
import org.apache.kafka.common.message.ApiVersionsRequestData;
import org.apache.kafka.common.metadata.UnregisterControllerRecord;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.ApiError;
import org.apache.kafka.common.requests.ApiVersionsRequest;
import org.apache.kafka.common.utils.LogContext;
import org.apache.kafka.server.common.MetadataVersion;
import org.apache.kafka.timeline.SnapshotRegistry;

import java.util.Map;

/** 4.4: as 4.1-4.3 (kraft.version in the raft layer, the metadata.version unknown until the bootstrap
 *  records are replayed, updateFeatures with the claimed epoch); LogContext and the bootstrap file moved;
 *  ApiVersions v5 names the cluster and node the client means (KIP-1242). */
final class ShimImpl extends Shim41 {
    /** KIP-1242: the request as the broker reads it at this version, then KafkaApis.handleApiVersionsRequest's
     *  clusterIdOrNodeIdIsInvalid (a private Scala def: its three conditions are restated here). */
    @Override
    Errors apiVersionsError(short version, JsonNode cmd, String clusterId, int nodeId) {
        if (version < 5) return null;
        ApiVersionsRequestData data = new ApiVersionsRequestData()
            .setClientSoftwareName("kfc").setClientSoftwareVersion("1");
        if (cmd.hasNonNull("cluster_id")) data.setClusterId(cmd.get("cluster_id").asText());
        if (cmd.has("node_id")) data.setNodeId(cmd.get("node_id").asInt());
        ApiVersionsRequest request = ApiVersionsRequest.parse(
            new ApiVersionsRequest(data, version).serialize(), version);
        boolean invalid = request.version() >= 5 && request.data().clusterId() != null
            && (!request.data().clusterId().equals(clusterId) || request.data().nodeId() != nodeId);
        return invalid ? Errors.REBOOTSTRAP_REQUIRED : null;
    }

    /** KIP-1312: QuorumController.unregisterController refuses its own id, then asks
     *  ClusterControlManager.unregisterController (the metadata.version, then the registration). */
    @Override
    ControllerResult<Void> unregisterController(Cluster c, int id) {
        if (id == c.active) throw new InvalidRequestException("Controller cannot unregister itself while it is active.");
        return c.clusterControl.unregisterController(id);
    }

    @Override
    int unregisteredController(ApiMessage m) {
        return m instanceof UnregisterControllerRecord ? ((UnregisterControllerRecord) m).controllerId() : -1;
    }

    @Override
    void replayUnregisterController(Cluster c, ApiMessage m) {
        c.clusterControl.replay((UnregisterControllerRecord) m);
    }
}
