// Evidence for tests/admin/test_admin_kafka4.py: what the Java admin client gets from the same
// broker for AlterShareGroupOffsets. Run as a single-file program:
// java -cp '<kafka libs>/*' AlterShareGroupOffsets.java BOOTSTRAP GROUP TOPIC PARTITION OFFSET
// Prints one line per outcome: "ok" or "failed: <exception>".
import java.util.Map;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.common.TopicPartition;

public class AlterShareGroupOffsets {
    public static void main(String[] args) throws Exception {
        TopicPartition partition = new TopicPartition(args[2], Integer.parseInt(args[3]));
        try (Admin admin = Admin.create(Map.of("bootstrap.servers", args[0]))) {
            var result = admin.alterShareGroupOffsets(args[1], Map.of(partition, Long.parseLong(args[4])));
            try {
                result.partitionResult(partition).get();
                System.out.println("ok");
            } catch (Exception e) {
                System.out.println("failed: " + e.getCause());
            }
        }
    }
}
