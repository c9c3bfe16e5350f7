package main

import (
	"context"

	"pidnode/admin"
	"pidnode/internal/route"
	"pidnode/webhook"
)

// webhookRoutes are the webhook endpoints' routes on the admin API, which
// commit through etcd in cluster mode.
func (n *node) webhookRoutes() ([]route.Route, error) {
	reg, err := n.jobRegistry()
	if err != nil {
		return nil, err
	}
	rcfg := webhook.RoutesConfig{Registry: reg, Logger: n.log.With("listener", "admin")}
	if n.cluster != nil {
		rcfg.Writer = n.cluster
	}
	return webhook.Routes(rcfg)
}

// webhookViews lists a namespace's webhook endpoints for the console's
// overview page (webhook.Views), in the console's words.
func (n *node) webhookViews() (func(prefix, ns string) ([]admin.WebhookView, uint64, error), error) {
	reg, err := n.jobRegistry()
	if err != nil {
		return nil, err
	}
	return func(prefix, ns string) ([]admin.WebhookView, uint64, error) {
		vs, last, err := webhook.Views(reg, prefix, ns)
		out := make([]admin.WebhookView, len(vs))
		for i, v := range vs {
			out[i] = admin.WebhookView{URL: v.URL, Description: v.Description, State: v.State, DisabledReason: v.DisabledReason,
				LastError: v.LastError, Kinds: v.Kinds, Cursor: v.Cursor, Failures: v.Failures, LastSuccess: v.LastSuccess}
		}
		return out, last, err
	}, nil
}

// startWebhooks builds the webhook deliverer (docs/product.md §4.5) and
// registers it as a job of the cluster: it runs on this node while it
// serves, or in cluster mode while this node leads the jobs' election, with
// its writes going through etcd. bind must have built the admin server.
func (n *node) startWebhooks() error {
	allow, err := n.cfg.outboundNets()
	if err != nil {
		return err
	}
	reg, err := n.jobRegistry()
	if err != nil {
		return err
	}
	wcfg := webhook.Config{Registry: reg, Allow: allow, Event: webhook.FeedEvent, Logger: n.log.With("job", "webhooks")}
	if n.cluster != nil {
		wcfg.Writer = n.cluster
	}
	if n.webhooks, err = webhook.New(wcfg); err != nil {
		return err
	}
	n.addMetrics(n.webhooks)
	n.addJob("webhooks", func(ctx context.Context) { n.webhooks.Run(ctx) })
	return nil
}
