package org.apache.kafka.controller;

import com.fasterxml.jackson.databind.node.ObjectNode;

import org.apache.kafka.common.feature.Features;
import org.apache.kafka.common.feature.SupportedVersionRange;
import org.apache.kafka.common.message.ApiVersionsResponseData;
import org.apache.kafka.common.requests.ApiVersionsResponse;
import org.apache.kafka.metadata.VersionRange;

import java.util.HashMap;
import java.util.Map;

/** Calls 3.7 and 3.8 share (their shims delegate to them). */
final class Until38 {
    private Until38() { }

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
