package admin

import "pidnode/stats"

// Stats and DayCount are the statistics reply (stats.Reply), which the
// console's statistics page reads through the API's route and charts.
type (
	Stats    = stats.Reply
	DayCount = stats.DayCount
)
