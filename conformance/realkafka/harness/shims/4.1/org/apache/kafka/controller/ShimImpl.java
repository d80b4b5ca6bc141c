package org.apache.kafka.controller;

/** 4.1-4.3: what Shim41 (layers/4.1-) holds, nothing more. */
final class ShimImpl extends Shim41 {
}
