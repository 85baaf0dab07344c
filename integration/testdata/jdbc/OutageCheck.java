// OutageCheck drives pgjdbc (the real driver) through pgaccel for
// TestSessions_PgjdbcThroughOutage: phases "open", "outage" and "back",
// each started by a line on stdin. Each step prints "OK <step>" or
// "FAIL <step>: <SQLSTATE> <message>"; each phase ends with
// "PHASE <name> done". Run: java -cp postgresql.jar OutageCheck.java
// HOST PORT DATABASE USER PASSWORD
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Properties;

public class OutageCheck {
    interface Step {
        void run() throws Exception;
    }

    static String url;
    static String user;
    static String password;

    static Connection connect(String pass) throws SQLException {
        Properties p = new Properties();
        p.setProperty("user", user);
        p.setProperty("password", pass);
        p.setProperty("connectTimeout", "10");
        return DriverManager.getConnection(url, p);
    }

    static void step(String name, Step s) {
        try {
            s.run();
            System.out.println("OK " + name);
        } catch (SQLException e) {
            System.out.println("FAIL " + name + ": " + e.getSQLState() + " " + e.getMessage().split("\n")[0]);
        } catch (Exception e) {
            System.out.println("FAIL " + name + ": - " + e);
        }
        System.out.flush();
    }

    // reads runs a server-prepared statement past pgjdbc's prepareThreshold
    // (so it becomes a named statement) and a plain Statement, checking
    // their answers.
    static void reads(Connection c) throws Exception {
        try (PreparedStatement ps = c.prepareStatement("SELECT v, amount FROM sess_orders WHERE id = ?")) {
            for (int i = 1; i <= 8; i++) {
                ps.setInt(1, i);
                try (ResultSet rs = ps.executeQuery()) {
                    if (!rs.next() || !rs.getString(1).equals("v" + i)) {
                        throw new Exception("wrong row for id " + i);
                    }
                }
            }
        }
        try (Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT count(*), sum(id) FROM sess_orders")) {
            if (!rs.next() || rs.getLong(1) != 200 || rs.getLong(2) != 20100) {
                throw new Exception("wrong count");
            }
        }
    }

    static void write(Connection c, String note) throws Exception {
        try (PreparedStatement ps = c.prepareStatement("INSERT INTO sess_writes (note) VALUES (?)")) {
            ps.setString(1, note);
            ps.executeUpdate();
        }
    }

    static String show(Connection c, String name) throws Exception {
        try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery("SHOW " + name)) {
            rs.next();
            return rs.getString(1);
        }
    }

    // retry runs s until it succeeds, for up to 30 seconds (rolling tx
    // back after each failure).
    static void retry(Step s, Connection tx) throws Exception {
        long deadline = System.currentTimeMillis() + 30000;
        while (true) {
            try {
                s.run();
                return;
            } catch (SQLException e) {
                if (System.currentTimeMillis() > deadline) {
                    throw e;
                }
                if (tx != null) {
                    tx.rollback();
                }
                Thread.sleep(200);
            }
        }
    }

    static void await(BufferedReader in, String phase) throws Exception {
        System.out.println("PHASE " + phase + " done");
        System.out.flush();
        if (in.readLine() == null) {
            System.exit(0);
        }
    }

    public static void main(String[] a) throws Exception {
        url = "jdbc:postgresql://" + a[0] + ":" + a[1] + "/" + a[2];
        user = a[3];
        password = a[4];
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        Connection auto = connect(password);
        Connection tx = connect(password);
        tx.setAutoCommit(false);

        step("open/reads", () -> reads(auto));
        step("open/tx reads", () -> { reads(tx); tx.commit(); });
        step("open/isValid", () -> { if (!auto.isValid(5)) throw new Exception("not valid"); });
        await(in, "open");

        // New sessions once every text is described: their logins, reads,
        // transactions and pings need no origin connection.
        Connection[] more = new Connection[3];
        step("logins/reads", () -> {
            for (int i = 0; i < more.length; i++) {
                more[i] = connect(password);
                more[i].setAutoCommit(i % 2 == 0);
                reads(more[i]);
                if (!more[i].getAutoCommit()) {
                    more[i].commit();
                }
                if (!more[i].isValid(5)) {
                    throw new Exception("not valid");
                }
            }
        });
        await(in, "logins");
        for (Connection c : more) {
            if (c != null) {
                c.close();
            }
        }

        step("outage/reads", () -> reads(auto));
        step("outage/tx reads", () -> { reads(tx); tx.commit(); });
        step("outage/login reads", () -> { try (Connection c = connect(password)) { reads(c); } });
        step("outage/login tx reads", () -> {
            try (Connection c = connect(password)) { c.setAutoCommit(false); reads(c); c.commit(); }
        });
        step("outage/wrong password", () -> { connect("wrong").close(); });
        step("outage/isValid", () -> { if (!auto.isValid(5)) throw new Exception("not valid"); });
        step("outage/write", () -> write(auto, "during"));
        step("outage/reads after write", () -> reads(auto));
        step("outage/tx write", () -> { reads(tx); write(tx, "during tx"); });
        step("outage/tx rollback", () -> tx.rollback());
        await(in, "outage");

        // pgaccel tries the origin again at most once a second.
        step("back/write", () -> retry(() -> write(auto, "after"), null));
        step("back/tx write", () -> retry(() -> { reads(tx); write(tx, "after tx"); tx.commit(); }, tx));
        step("back/settings", () -> {
            String d = show(auto, "extra_float_digits"), n = show(auto, "application_name");
            if (!d.equals("3") || !n.equals("PostgreSQL JDBC Driver")) {
                throw new Exception("extra_float_digits " + d + ", application_name " + n);
            }
        });
        step("back/reads", () -> reads(auto));
        System.out.println("PHASE back done");
        auto.close();
        tx.close();
    }
}
