package shed

import (
	"fmt"
	"strconv"
	"sync/atomic"
)

// Class says which part of a Budget a listener may use.
type Class uint8

const (
	// Public listeners (resolver, DNS, native protocol) accept only while
	// the process holds fewer than Budget.Limit minus Budget.Reserve
	// connections, counting every listener's (the admin one's too).
	Public Class = iota
	// Admin listeners may use the whole Budget.Limit.
	Admin
)

// BudgetConfig derives a Budget from the process's descriptor limit. Zero
// values select the documented defaults.
type BudgetConfig struct {
	// Descriptors is the process's descriptor limit (the soft
	// RLIMIT_NOFILE). Required (positive).
	Descriptors int
	// Files is how many descriptors are left for everything but accepted
	// connections: the database, the bound sockets, etcd, outbound requests,
	// the runtime's own. If zero, DefaultFiles(Descriptors).
	Files int
	// Reserve is how many of the connection slots only Admin listeners may
	// take. If zero, DefaultReserve(Descriptors − Files).
	Reserve int
}

// DefaultFiles is BudgetConfig.Files when zero: an eighth of the
// descriptors, at least 64.
func DefaultFiles(descriptors int) int { return max(64, descriptors/8) }

// DefaultReserve is BudgetConfig.Reserve when zero: a sixteenth of the
// connection slots, at least 8.
func DefaultReserve(conns int) int { return max(8, conns/16) }

// Budget counts the connections the process's Listeners hold. Safe for
// concurrent use; the zero value is not usable (NewBudget).
type Budget struct {
	limit, reserve int64
	held           atomic.Int64
}

// NewBudget validates cfg and fills its defaults. There must be room for at
// least one public connection after Files and Reserve.
func NewBudget(cfg BudgetConfig) (*Budget, error) {
	switch {
	case cfg.Descriptors <= 0:
		return nil, &ConfigError{Pkg: "shed", Field: "Descriptors", Value: strconv.Itoa(cfg.Descriptors), Reason: "must be positive", Err: ErrBadConfig}
	case cfg.Files < 0:
		return nil, &ConfigError{Pkg: "shed", Field: "Files", Value: strconv.Itoa(cfg.Files), Reason: "must not be negative", Err: ErrBadConfig}
	case cfg.Reserve < 0:
		return nil, &ConfigError{Pkg: "shed", Field: "Reserve", Value: strconv.Itoa(cfg.Reserve), Reason: "must not be negative", Err: ErrBadConfig}
	}
	if cfg.Files == 0 {
		cfg.Files = DefaultFiles(cfg.Descriptors)
	}
	conns := cfg.Descriptors - cfg.Files
	if cfg.Reserve == 0 {
		cfg.Reserve = DefaultReserve(conns)
	}
	if conns-cfg.Reserve < 1 {
		return nil, &ConfigError{Pkg: "shed", Field: "Descriptors", Value: strconv.Itoa(cfg.Descriptors), Err: ErrBadConfig,
			Reason: fmt.Sprintf("leaves no connection slot after %d for files and %d reserved for the admin listener", cfg.Files, cfg.Reserve)}
	}
	return &Budget{limit: int64(conns), reserve: int64(cfg.Reserve)}, nil
}

// Limit is the most connections all Listeners together may hold.
func (b *Budget) Limit() int { return int(b.limit) }

// Reserve is how many of Limit only Admin listeners may take.
func (b *Budget) Reserve() int { return int(b.reserve) }

// Held is how many connections are held now.
func (b *Budget) Held() int { return int(b.held.Load()) }

// Cap is the most connections a listener of class c may see held when it
// accepts one more.
func (b *Budget) Cap(c Class) int {
	if c == Admin {
		return int(b.limit)
	}
	return int(b.limit - b.reserve)
}

// acquire takes one slot for class c, or reports false.
func (b *Budget) acquire(c Class) bool {
	if b.held.Add(1) > int64(b.Cap(c)) {
		b.held.Add(-1)
		return false
	}
	return true
}

func (b *Budget) release() { b.held.Add(-1) }
