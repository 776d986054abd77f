module traj2env.invalid/gocalls

go 1.21
