package org.apache.kafka.controller;

import org.apache.kafka.common.utils.Time;

import java.util.function.Supplier;

/** A clock the harness moves: a broker session is alive or has expired as the command says. */
final class ManualTime implements Time {
    private long nanos = 1_000_000_000L;

    void sleepNs(long ns) {
        nanos += ns;
    }

    @Override
    public long milliseconds() {
        return nanos / 1_000_000L;
    }

    @Override
    public long nanoseconds() {
        return nanos;
    }

    @Override
    public void sleep(long ms) {
        nanos += ms * 1_000_000L;
    }

    @Override
    public void waitObject(Object obj, Supplier<Boolean> condition, long deadlineMs) {
        throw new UnsupportedOperationException("the harness never waits");
    }
}
