// A broker-side metrics reporter for tests/observability/test_metrics_push.py: it asks the
// broker for client telemetry (KIP-714) and writes every payload a client pushes to a file
// of its own in the folder named by the broker config kafka_async.test.telemetry.dir.
// File name: <sequence>-<client instance id>-<terminating: t|f>.bin; the bytes are the
// (decompressed) OTLP MetricsData protobuf; a file is written under a temporary name first
// and renamed, so a reader never sees half of one.

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

import org.apache.kafka.common.metrics.KafkaMetric;
import org.apache.kafka.common.metrics.MetricsReporter;
import org.apache.kafka.server.telemetry.ClientTelemetryContext;
import org.apache.kafka.server.telemetry.ClientTelemetryExporter;
import org.apache.kafka.server.telemetry.ClientTelemetryExporterProvider;
import org.apache.kafka.server.telemetry.ClientTelemetryPayload;

public class RecordingTelemetryReporter
        implements MetricsReporter, ClientTelemetryExporterProvider, ClientTelemetryExporter {

    private final AtomicInteger sequence = new AtomicInteger();
    private volatile Path dir;

    @Override
    public void configure(Map<String, ?> configs) {
        Object value = configs.get("kafka_async.test.telemetry.dir");
        if (value != null) {
            dir = Paths.get(value.toString());
        }
    }

    @Override
    public void init(List<KafkaMetric> metrics) {}

    @Override
    public void metricChange(KafkaMetric metric) {}

    @Override
    public void metricRemoval(KafkaMetric metric) {}

    @Override
    public void close() {}

    @Override
    public ClientTelemetryExporter clientTelemetryExporter() {
        return this;
    }

    @Override
    public void exportMetrics(ClientTelemetryContext context, ClientTelemetryPayload payload) {
        Path target = dir;
        if (target == null) {
            return;
        }
        ByteBuffer data = payload.data().duplicate();
        byte[] bytes = new byte[data.remaining()];
        data.get(bytes);
        String name = String.format("%06d-%s-%s.bin", sequence.incrementAndGet(),
                payload.clientInstanceId(), payload.isTerminating() ? "t" : "f");
        try {
            Path tmp = target.resolve(name + ".tmp");
            Files.write(tmp, bytes);
            Files.move(tmp, target.resolve(name), StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException e) {
            throw new RuntimeException(e);
        }
    }
}
