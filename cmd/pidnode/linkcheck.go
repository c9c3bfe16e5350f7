package main

import (
	"fmt"
	"strconv"
	"time"

	"pidnode/internal/buildinfo"
	"pidnode/linkcheck"
)

// LinkcheckConfig are the link checker's settings (docs/product.md §4.4),
// embedded in Config (their TOML keys are top-level like the others).
type LinkcheckConfig struct {
	LinkcheckInterval    Duration `toml:"linkcheck_interval"`
	LinkcheckContact     string   `toml:"linkcheck_contact"`
	LinkcheckFailures    int      `toml:"linkcheck_failures"`
	LinkcheckMinAge      Duration `toml:"linkcheck_min_age"`
	LinkcheckHostDelay   Duration `toml:"linkcheck_host_delay"`
	LinkcheckConcurrency int      `toml:"linkcheck_concurrency"`
	LinkcheckTimeout     Duration `toml:"linkcheck_timeout"`
	LinkcheckMaxBytes    ByteSize `toml:"linkcheck_max_bytes"`
}

func defaultLinkcheckConfig() LinkcheckConfig {
	return LinkcheckConfig{
		LinkcheckInterval:    Duration{linkcheck.DefaultInterval},
		LinkcheckFailures:    linkcheck.DefaultFailures,
		LinkcheckMinAge:      Duration{linkcheck.DefaultMinAge},
		LinkcheckHostDelay:   Duration{linkcheck.DefaultHostDelay},
		LinkcheckConcurrency: linkcheck.DefaultConcurrency,
		LinkcheckTimeout:     Duration{linkcheck.DefaultTimeout},
		LinkcheckMaxBytes:    linkcheck.DefaultMaxBytes,
	}
}

func (c *Config) linkcheckSettings() []setting {
	dur := func(name, help string, p *Duration, least time.Duration) setting {
		return setting{name: name, help: help,
			set: func(v string) error {
				d, err := time.ParseDuration(v)
				if v == "0" {
					d, err = 0, nil
				}
				if err != nil || d < least {
					return fmt.Errorf("want a duration of at least %s such as 90s, 48h, got %q", least, v)
				}
				if name == "linkcheck-interval" && d != 0 && d < time.Second {
					return fmt.Errorf("want 0 (off) or a duration of at least 1s such as 168h, got %q", v)
				}
				p.Duration = d
				return nil
			},
			get: func() string { return p.String() }}
	}
	atLeastOne := func(name, help string, p *int) setting {
		return setting{name: name, help: help,
			set: func(v string) error {
				n, err := strconv.Atoi(v)
				if err != nil || n < 1 {
					return fmt.Errorf("want a positive integer, got %q", v)
				}
				*p = n
				return nil
			},
			get: func() string { return strconv.Itoa(*p) }}
	}
	lc := &c.LinkcheckConfig
	return []setting{
		dur("linkcheck-interval", "how often the link checker visits each identifier's target and variant URLs, spread evenly over the period (0 = no link checks)", &lc.LinkcheckInterval, 0),
		{name: "linkcheck-contact", help: "operator contact (an e-mail address or URL) in the link checker's User-Agent, for the sites it visits",
			set: func(v string) error { lc.LinkcheckContact = v; return nil }, get: func() string { return lc.LinkcheckContact }},
		atLeastOne("linkcheck-failures", "consecutive failed checks after which a URL is broken (with linkcheck-min-age)", &lc.LinkcheckFailures),
		dur("linkcheck-min-age", "how long the consecutive failures must span before a URL is broken; failing URLs are rechecked within it", &lc.LinkcheckMinAge, time.Second),
		dur("linkcheck-host-delay", "least time between two link checks of one host (0 = none)", &lc.LinkcheckHostDelay, 0),
		atLeastOne("linkcheck-concurrency", "link checks in flight at once, over all hosts (one at a time per host)", &lc.LinkcheckConcurrency),
		dur("linkcheck-timeout", "bound of one request of a link check (the HEAD, or the GET after a refused HEAD), redirects and body included", &lc.LinkcheckTimeout, time.Millisecond),
		{name: "linkcheck-max-bytes", help: "body bytes a link check's GET reads at most (HEAD first; GET when HEAD is refused)",
			set: func(v string) error {
				n, err := parseByteSize(v)
				if err == nil && n < 1 {
					err = fmt.Errorf("want at least 1 byte, got %q", v)
				}
				lc.LinkcheckMaxBytes = n
				return err
			},
			get: func() string { return lc.LinkcheckMaxBytes.String() }},
	}
}

// startLinkcheck builds the link checker and registers it as a job (once
// per cluster, jobs.go); with --linkcheck-interval 0 there is none. Its
// metrics are on every node's page.
func (n *node) startLinkcheck() error {
	cfg := n.cfg
	if cfg.LinkcheckInterval.Duration <= 0 {
		return nil
	}
	reg, err := n.jobRegistry()
	if err != nil {
		return err
	}
	allow, err := cfg.outboundNets()
	if err != nil {
		return err
	}
	lcfg := linkcheck.Config{
		Registry:    reg,
		Interval:    cfg.LinkcheckInterval.Duration,
		Failures:    cfg.LinkcheckFailures,
		MinAge:      cfg.LinkcheckMinAge.Duration,
		HostDelay:   cfg.LinkcheckHostDelay.Duration,
		Concurrency: cfg.LinkcheckConcurrency,
		Timeout:     cfg.LinkcheckTimeout.Duration,
		MaxBytes:    int64(cfg.LinkcheckMaxBytes),
		Allow:       allow,
		UserAgent:   linkcheck.UserAgent(buildinfo.Read().Version, cfg.PublicURL, cfg.LinkcheckContact),
		Logger:      n.log.With("job", "linkcheck"),
	}
	if lcfg.HostDelay == 0 {
		lcfg.HostDelay = -1 // the operator's 0: no delay
	}
	if n.cluster != nil {
		lcfg.Writer = n.cluster
	}
	c, err := linkcheck.New(lcfg)
	if err != nil {
		return err
	}
	if cfg.LinkcheckContact == "" {
		n.log.Warn("link checks run without an operator contact in their User-Agent; set --linkcheck-contact so that sites can reach you")
	}
	n.addMetrics(c)
	n.log.Info("link checker on", "settings", c.String(), "user_agent", lcfg.UserAgent)
	n.addJob("linkcheck", c.Run)
	return nil
}
