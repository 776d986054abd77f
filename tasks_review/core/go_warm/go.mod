module traj2env.invalid/warm

go 1.21
