package org.apache.kafka.controller;

/** 4.1: the base speaks this line. */
final class ShimImpl extends Shim {
}
