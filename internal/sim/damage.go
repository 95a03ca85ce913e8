package sim

import "context"

// damageCheck is where a killed file store's file may be damaged before
// it is opened again (issue 8, item 10).
func (w *world) damageCheck(ctx context.Context) {}
