import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Write-then-read through pgaccel with pgjdbc.
 *
 * <p>Usage: java -cp postgresql.jar RywCheck.java HOST PORT DBNAME USER PASSWORD TABLE BASE CLIENTS PAIRS
 *
 * <p>CLIENTS threads (numbered from BASE) each open a connection in autocommit and, PAIRS times, insert a row numbered
 * 1, 2, 3 ... of their own, then read the highest number of their rows. A read below the number
 * just committed is stale. pgjdbc sends everything in the extended protocol and prepares a
 * statement on the server from its fifth execution. Prints: RESULT pairs=N stale=M first=...
 */
public class RywCheck {
  public static void main(String[] args) throws Exception {
    String url = "jdbc:postgresql://" + args[0] + ":" + args[1] + "/" + args[2] + "?sslmode=disable";
    Properties props = new Properties();
    props.setProperty("user", args[3]);
    props.setProperty("password", args[4]);
    String table = args[5];
    int base = Integer.parseInt(args[6]);
    int clients = Integer.parseInt(args[7]);
    int pairs = Integer.parseInt(args[8]);
    AtomicLong done = new AtomicLong();
    AtomicLong stale = new AtomicLong();
    AtomicReference<String> first = new AtomicReference<>("");
    AtomicReference<String> error = new AtomicReference<>("");
    Thread[] threads = new Thread[clients];
    for (int c = 0; c < clients; c++) {
      final int n = base + c;
      threads[c] =
          new Thread(
              () -> {
                try (Connection conn = DriverManager.getConnection(url, props);
                    PreparedStatement ins =
                        conn.prepareStatement(
                            "INSERT INTO " + table + " (id, client, seq) VALUES (?, ?, ?)");
                    PreparedStatement sel =
                        conn.prepareStatement(
                            "SELECT coalesce(max(seq), 0) FROM " + table + " WHERE client = ?")) {
                  conn.setAutoCommit(true);
                  for (int i = 1; i <= pairs; i++) {
                    ins.setLong(1, 1_000_000L * (n + 1) + i);
                    ins.setInt(2, n);
                    ins.setLong(3, i);
                    ins.executeUpdate();
                    sel.setInt(1, n);
                    long got;
                    try (ResultSet rs = sel.executeQuery()) {
                      rs.next();
                      got = rs.getLong(1);
                    }
                    done.incrementAndGet();
                    if (got < i) {
                      stale.incrementAndGet();
                      first.compareAndSet("", "client " + n + " wrote " + i + " and read " + got);
                    }
                  }
                } catch (Exception e) {
                  error.compareAndSet("", e.toString());
                }
              });
      threads[c].start();
    }
    for (Thread t : threads) {
      t.join();
    }
    if (!error.get().isEmpty()) {
      System.out.println("ERROR " + error.get().replace('\n', ' '));
      System.exit(1);
    }
    System.out.println(
        "RESULT pairs=" + done.get() + " stale=" + stale.get() + " first=" + first.get());
  }
}
