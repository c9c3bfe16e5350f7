package main

import (
	"context"
	"sync"
	"time"

	"pidnode/model"
	"pidnode/registry"
)

// job is a background task of the node that must run once per cluster (link
// checks, webhook deliveries: docs/product.md §10): on a single node it runs
// while the node serves; in cluster mode it runs on the node that leads the
// election of the cluster's jobs, and another node takes it over when that
// one goes.
type job struct {
	name string
	// run works until ctx ends; it is called again if the node regains the lead.
	run func(ctx context.Context)
}

// addJob registers a job; startNode calls it before run.
func (n *node) addJob(name string, run func(ctx context.Context)) {
	n.jobs = append(n.jobs, job{name: name, run: run})
}

// runJobs runs the registered jobs until ctx ends and returns when they have
// all returned.
func (n *node) runJobs(ctx context.Context) {
	if len(n.jobs) == 0 {
		return
	}
	all := func(ctx context.Context) {
		var wg sync.WaitGroup
		for _, j := range n.jobs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				j.run(ctx)
			}()
		}
		wg.Wait()
	}
	if n.cluster == nil {
		all(ctx)
		return
	}
	n.cluster.Lead(ctx, "jobs", all)
}

// jobRegistry is the registry the jobs and the features' routes read and
// (on a single node) write through, built once over the node's database
// with the node's metadata model (--model), as the admin server loads it.
func (n *node) jobRegistry() (*registry.Registry, error) {
	if n.jobReg != nil {
		return n.jobReg, nil
	}
	mb := n.model
	if len(mb) == 0 {
		mb = model.DefaultModel
	}
	mod, err := model.LoadModel(mb)
	if err != nil {
		return nil, fileError("model file", n.cfg.Model, "model", err)
	}
	reg, err := registry.New(registry.Config{DB: n.db, Namer: n.namer, URLIndex: mod.URL.Index})
	if err != nil {
		return nil, err
	}
	n.jobReg = reg
	return reg, nil
}

// searchMergeEvery is how often the node files the words its writes left
// pending in the search index (registry.MergeSearch): often enough that a
// search checks few records one by one, seldom enough that a merge shares
// pages among many records.
const searchMergeEvery = 250 * time.Millisecond

// mergeSearch files the pending words of the search index until ctx ends.
// Every node runs it, the cluster's too: the index is the node's own.
func (n *node) mergeSearch(ctx context.Context) {
	reg, err := n.jobRegistry()
	if err != nil {
		n.log.Error("search index merge not started", "err", err)
		return
	}
	reg.RunSearchMerge(ctx, searchMergeEvery, func(err error) {
		n.log.Warn("search index merge failed; the records stay pending", "err", err)
	})
}
