package admin

import "pidnode/linkcheck"

// LinkcheckPage and LinkcheckRecord are the link check routes' replies
// (package linkcheck owns the routes), which the console's page reads.
type (
	LinkcheckPage   = linkcheck.Page
	LinkcheckRecord = linkcheck.Record
)
