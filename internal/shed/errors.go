package shed

import "errors"

// ErrBadConfig is returned by NewBudget for a BudgetConfig it cannot use.
var ErrBadConfig = errors.New("shed: bad config")
