package planner

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// Defaults of PrivilegesOptions.
const (
	DefaultPrivilegesTTL        = 5 * time.Second
	DefaultPrivilegesMaxEntries = 10000
)

// PrivilegesOptions tune Privileges. Zero values mean the defaults.
type PrivilegesOptions struct {
	// TTL is how long an answer per (role, table) is reused
	// (DefaultPrivilegesTTL): a REVOKE or a new policy takes effect on
	// the acceleration at most this late.
	TTL time.Duration
	// MaxEntries bounds the cache (DefaultPrivilegesMaxEntries).
	MaxEntries int
	// MaxStale is how long past its expiry an answer keeps serving while
	// the origin cannot be reached (0: never; auth.max_stale).
	MaxStale time.Duration
	// Tables, when set, lists the datasets' tables: each check asks the
	// origin about them too, for the same role, so that a role may read a
	// dataset it never read before while the origin is down.
	Tables func() []TableID
}

// Privileges says whether a role may read tables from the acceleration,
// asking the origin (as the refresh account, through pool) what it would
// allow: has_table_privilege(role, table, 'SELECT'), and no row level
// security on the table (relrowsecurity), since the acceleration holds every
// row and could not apply the policies.
type Privileges struct {
	pool   *pgxpool.Pool
	cache  *ttlCache[privAnswer]
	tables func() []TableID
	// warming holds the roles Warm is looking up now.
	warmMu  sync.Mutex
	warming map[string]bool
}

var _ PrivilegeChecker = (*Privileges)(nil)

type privAnswer struct {
	exists, canSelect, rowSecurity bool
}

// NewPrivileges returns a Privileges over the origin behind pool.
func NewPrivileges(pool *pgxpool.Pool, opts PrivilegesOptions) *Privileges {
	if opts.TTL <= 0 {
		opts.TTL = DefaultPrivilegesTTL
	}
	if opts.MaxEntries <= 0 {
		opts.MaxEntries = DefaultPrivilegesMaxEntries
	}
	return &Privileges{pool: pool, cache: newTTLCache[privAnswer](opts.TTL, opts.MaxEntries, opts.MaxStale), tables: opts.Tables}
}

// privilegesSQL answers, for each (schema, table) of $2 and $3, whether the
// table exists, whether role $1 may SELECT it, and whether it has row level
// security. A role that does not exist is an error.
const privilegesSQL = `SELECT t.ord,
       c.oid IS NOT NULL,
       COALESCE(pg_catalog.has_table_privilege($1::text, c.oid, 'SELECT'), false),
       COALESCE(c.relrowsecurity, false)
FROM unnest($2::text[], $3::text[]) WITH ORDINALITY AS t(s, r, ord)
LEFT JOIN pg_catalog.pg_namespace n ON n.nspname = t.s
LEFT JOIN pg_catalog.pg_class c ON c.relnamespace = n.oid AND c.relname = t.r`

// CanSelect reports whether role may read every table from the
// acceleration; when not, reason is ReasonRowSecurity, ReasonPrivilege or
// ReasonUnresolved (a table that does not exist).
func (p *Privileges) CanSelect(ctx context.Context, role string, tables []TableID) (bool, string, error) {
	answers := make([]privAnswer, len(tables))
	var missing []int
	for i, t := range tables {
		a, ok := p.cache.lookup(privKey(role, t))
		if !ok {
			missing = append(missing, i)
			continue
		}
		answers[i] = a
	}
	if len(missing) > 0 {
		lctx := ctx
		stale := slices.Clone(answers)
		staleOK := p.stale(role, tables, missing, stale)
		if staleOK {
			// Expired answers may serve: the origin is waited for only
			// briefly (staleWait; see ttlCache.get).
			var cancel context.CancelFunc
			lctx, cancel = context.WithTimeout(ctx, staleWait)
			defer cancel()
		}
		if err := p.loadAll(lctx, role, tables, missing, answers); err != nil {
			if !Unreachable(err) || !staleOK {
				return false, ReasonPrivilege, err
			}
			copy(answers, stale)
		}
	}
	for _, a := range answers {
		switch {
		case !a.exists:
			return false, ReasonUnresolved, nil
		case !a.canSelect:
			return false, ReasonPrivilege, nil
		case a.rowSecurity:
			return false, ReasonRowSecurity, nil
		}
	}
	return true, "", nil
}

// Warm looks role's answers for tables up in the background when one is
// missing or expired (the lookup asks about the datasets' tables too:
// loadAll), one lookup per role at a time. The proxy calls it for a point
// read runtime.point_reads: origin sends to the origin: the acceleration
// answers such a read once the origin is down, and must then check the
// privilege without the origin. Reads the acceleration answers keep the
// answers fresh by themselves; a role whose reads all went to the origin
// had none, and its point reads failed the check (privilege_check_failed)
// for the whole outage.
func (p *Privileges) Warm(role string, tables []TableID) {
	fresh := true
	for _, t := range tables {
		if _, ok := p.cache.lookup(privKey(role, t)); !ok {
			fresh = false
			break
		}
	}
	if fresh {
		return
	}
	p.warmMu.Lock()
	if p.warming[role] {
		p.warmMu.Unlock()
		return
	}
	if p.warming == nil {
		p.warming = make(map[string]bool)
	}
	p.warming[role] = true
	p.warmMu.Unlock()
	tables = slices.Clone(tables)
	go func() {
		defer func() {
			p.warmMu.Lock()
			delete(p.warming, role)
			p.warmMu.Unlock()
		}()
		ctx, cancel := context.WithTimeout(context.Background(), loadTimeout)
		defer cancel()
		_, _, _ = p.CanSelect(ctx, role, tables)
	}()
}

// loadAll is load, asking in the same round trip about the datasets'
// tables the cache holds no fresh answer for role of.
func (p *Privileges) loadAll(ctx context.Context, role string, tables []TableID, missing []int, answers []privAnswer) error {
	all, more := slices.Clone(tables), slices.Clone(missing)
	if p.tables != nil {
		for _, t := range p.tables() {
			if _, fresh := p.cache.lookup(privKey(role, t)); !fresh && !slices.Contains(tables, t) {
				all = append(all, t)
				more = append(more, len(all)-1)
			}
		}
	}
	got := make([]privAnswer, len(all))
	if err := p.load(ctx, role, all, more, got); err != nil {
		return err
	}
	for _, i := range missing {
		answers[i] = got[i]
	}
	return nil
}

// load asks the origin about tables[missing] in one round trip.
func (p *Privileges) load(ctx context.Context, role string, tables []TableID, missing []int, answers []privAnswer) error {
	schemas := make([]string, len(missing))
	names := make([]string, len(missing))
	for j, i := range missing {
		schemas[j], names[j] = tables[i].Schema, tables[i].Name
	}
	rows, err := p.pool.Query(ctx, privilegesSQL, role, schemas, names)
	if err != nil {
		return fmt.Errorf("check privileges of %s: %w", role, err)
	}
	defer rows.Close()
	for rows.Next() {
		var ord int64
		var a privAnswer
		if err := rows.Scan(&ord, &a.exists, &a.canSelect, &a.rowSecurity); err != nil {
			return fmt.Errorf("check privileges of %s: %w", role, err)
		}
		if ord < 1 || int(ord) > len(missing) {
			return fmt.Errorf("check privileges of %s: unexpected row %d", role, ord)
		}
		i := missing[ord-1]
		answers[i] = a
		p.cache.put(privKey(role, tables[i]), a)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("check privileges of %s: %w", role, err)
	}
	return nil
}

// stale fills answers[missing] with expired answers still within
// MaxStale, for an origin that cannot be reached; false if one is missing.
func (p *Privileges) stale(role string, tables []TableID, missing []int, answers []privAnswer) bool {
	for _, i := range missing {
		a, ok := p.cache.lookupStale(privKey(role, tables[i]))
		if !ok {
			return false
		}
		answers[i] = a
	}
	return true
}

func privKey(role string, t TableID) string {
	return role + "\x00" + t.Schema + "\x00" + t.Name
}
