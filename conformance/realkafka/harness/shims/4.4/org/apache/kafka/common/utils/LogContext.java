package org.apache.kafka.common.utils;

/** 4.4 moved LogContext to common.utils.internals (the core names it by its 4.0-4.3 home): this
 *  subclass keeps that one spelling, and is the same LogContext to every Kafka class it is given to. */
public class LogContext extends org.apache.kafka.common.utils.internals.LogContext {
    public LogContext(String logPrefix) {
        super(logPrefix);
    }

    public LogContext() {
        super();
    }
}
