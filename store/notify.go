package store

import "sync"

// Commit signals: a reader that follows data as it is written (the change
// feed of docs/product.md §4.3) waits for the next commit that touched its
// topic instead of polling. A write transaction names the topics it changes
// (Tx.Signal); once it has committed, every channel Wait returned for those
// topics is closed. A transaction rolled back (a failed batch partner,
// Rehearse) signals nothing. Topics are the caller's strings; the table holds
// only topics someone waits on.
type signals struct {
	mu sync.Mutex
	ch map[string]chan struct{}
}

// Wait returns a channel that is closed after the next commit of a
// transaction that called Signal(topic), or when Replace swaps the file. To
// miss nothing, call Wait before reading the data it guards: a commit between
// the read and Wait would otherwise go unseen. Safe for concurrent use.
func (db *DB) Wait(topic string) <-chan struct{} {
	db.sig.mu.Lock()
	defer db.sig.mu.Unlock()
	if db.sig.ch == nil {
		db.sig.ch = map[string]chan struct{}{}
	}
	c, ok := db.sig.ch[topic]
	if !ok {
		c = make(chan struct{})
		db.sig.ch[topic] = c
	}
	return c
}

// wake closes the channels of topics (every topic if all).
func (db *DB) wake(topics []string, all bool) {
	db.sig.mu.Lock()
	defer db.sig.mu.Unlock()
	if all {
		for t, c := range db.sig.ch {
			close(c)
			delete(db.sig.ch, t)
		}
		return
	}
	for _, t := range topics {
		if c, ok := db.sig.ch[t]; ok {
			close(c)
			delete(db.sig.ch, t)
		}
	}
}

// Signal wakes the waiters of topic (DB.Wait) once tx, a transaction of
// Update or UpdateAlone, has committed. Calling it twice for a topic in one
// transaction is harmless; in a read transaction or in Rehearse (which never
// commits) it does nothing.
func (tx *Tx) Signal(topic string) {
	if tx.db == nil || !tx.tx.Writable() {
		return
	}
	for _, t := range tx.topics {
		if t == topic {
			return
		}
	}
	if tx.topics == nil {
		db := tx.db
		tx.tx.OnCommit(func() { db.wake(tx.topics, false) })
	}
	tx.topics = append(tx.topics, topic)
}
